"""Frame.io (pg_stat_io per backend type, object and context, 16+) against the view's own delta read
independently over the same window: every operation, its bytes and its time; ms per operation
against the view's time / count worked out by hand; on 18 the byte columns against the blocks a
sequential scan combined into reads (io_combine_limit). The recording's io_rows hold the window as
counts over the tick: equal to the view's delta exactly (operations, kB, µs)."""

from __future__ import annotations

import sqlite3
import time

import pytest
from view_counters import quiet_window

from pgio_tui import metrics as M
from pgio_tui.frame import BLOCK_KB, IO_BYTES_OPS, IO_FIELDS, IO_OPS, IO_TIMES
from pgio_tui.ratios import per_op_ms
from pgio_tui.sampler import Sampler
from pgio_tui.store import schema
from pgio_tui.store.writer import Recorder

# every pg_stat_io row figure against the view's own delta over the same window (16+)
CHECKS = {m.name: "view" for m in M.IO_METRICS}

_TIMES = ("read_time", "write_time", "writeback_time", "extend_time", "fsync_time")


def _view_sql(conn) -> str | None:
    """The statement reading every pg_stat_io row, written here apart from the tick statement:
    bytes from 18's columns or operations x op_bytes (16-17). Asked once: a catalog read between
    ticks would count hits of its own."""
    major = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
    if major < 16:
        return None
    nbytes = ("read_bytes / 1024.0, write_bytes / 1024.0, extend_bytes / 1024.0" if major >= 18
              else "reads * op_bytes / 1024.0, writes * op_bytes / 1024.0, extends * op_bytes / 1024.0")
    return f"SELECT backend_type, object, context, {', '.join(IO_OPS)}, {nbytes}, {', '.join(_TIMES)} FROM pg_stat_io"


# The tick's own backend hits a few catalog pages now and then and publishes them up to 10 s later
# (an idle backend's statistics): no window is free of them, so a client backend's relation hits
# may differ by that many from the view's delta; every other figure must be exact.
OWN = ("client backend", "relation", "normal")
OWN_HITS = 20


class _View(dict):
    """pg_stat_io rows with I/O (key -> {IO_FIELDS: cumulative}); equal to another when every figure
    is, the tick's own late hits (OWN) allowed."""

    def __eq__(self, other) -> bool:
        if not isinstance(other, dict) or self.keys() != other.keys():
            return False
        return all(a == b or (k == OWN and all(a[f] == b[f] or (f == "hits" and abs(a[f] - b[f]) <= OWN_HITS)
                                                  for f in IO_FIELDS))
                   for k, a, b in ((k, self[k], other[k]) for k in self))

    __hash__ = None


def _view(conn, sql: str | None) -> _View | None:
    if sql is None:
        return None
    rows = conn.execute(sql).fetchall()
    return _View({tuple(r[:3]): dict(zip(IO_FIELDS, (None if v is None else float(v) for v in r[3:])))
                  for r in rows if any(r[3:3 + len(IO_OPS)])})


def _delta(before: dict, after: dict, key, fld: str) -> float | None:
    a = after[key][fld]
    b = before.get(key, {}).get(fld, 0.0 if a is not None else None)
    return None if a is None else a - (b or 0.0)


def _window(make_cluster, work_sql: list[str], restart: bool = False, **settings):
    """(before, after, frame, major) around work_sql on a cluster of its own with a ~580-page table t;
    restart: its pages out of shared buffers first (read from the kernel again)."""
    cluster = make_cluster(**{"autovacuum": "off", "shared_buffers": "2MB", **settings})
    probe = cluster.connect()
    major = probe.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
    probe.execute("CREATE TABLE t (id int, pad text) WITH (fillfactor = 50)")
    probe.execute("INSERT INTO t SELECT g, repeat('x', 300) FROM generate_series(1, 6000) g")  # ~580 pages
    if restart:  # a copy per attempt (quiet_window may take several): each one read from the kernel once
        for attempt in range(5):
            probe.execute(f"CREATE TABLE t{attempt} AS SELECT * FROM t")
    probe.execute("CHECKPOINT")
    if restart:
        probe.close()
        cluster.restart()
        probe = cluster.connect()
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        for tick in range(12):  # warm-up: the tick's first reads of the catalogs are done
            sampler.sample(tick, float(tick))

        def work(attempt: int, _before) -> None:
            with cluster.connect() as conn:
                for sql in work_sql:
                    conn.execute(sql.format(attempt=attempt))

        sql = _view_sql(probe)
        sampler.server.final = True  # every tick pays out what a spread burst still owes: the window starts clean
        before, after, frame = quiet_window(sampler, lambda: _view(probe, sql), work, "pg_stat_io", tries=5)
    finally:
        sampler.close()
        probe.close()
    return before, after, frame, major


WORK = ["INSERT INTO t SELECT g, repeat('y', 300) FROM generate_series(1, 3000) g",  # extends, evictions
        "SELECT count(*) FROM t",  # a scan larger than a quarter of shared_buffers: the bulkread ring
        "VACUUM t",  # the vacuum ring
        "CHECKPOINT"]  # the checkpointer's writes and fsyncs


def _recorded(frame, path) -> dict:
    """The window's Frame as a recording stores it, read with plain SQL: key -> {IO_FIELDS: the whole
    count over the tick}, the kB with their blocks (8 per operation) and the times in µs."""
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        rec.write(frame)
    with sqlite3.connect(path) as c:
        rows = c.execute(f"SELECT k.backend_type, k.object, k.context, {', '.join(schema.IO_STORED)} "
                         "FROM io_rows r JOIN io_keys k ON k.id = r.key_id").fetchall()
    out = {}
    for bt, obj, ctx, *vals in rows:
        row = dict(zip(IO_FIELDS, vals))
        for kb, op in IO_BYTES_OPS.items():
            row[kb] = None if row[kb] is None else row[kb] + BLOCK_KB * row[op]
        out[(bt, obj, ctx)] = row
    return out


@pytest.mark.matrix
def test_every_row_and_figure_equals_the_views_delta(make_cluster, tmp_path):
    before, after, frame, major = _window(make_cluster, WORK, track_io_timing="on")
    if before is None:  # before 16: no pg_stat_io, no rows (unknown, not 0)
        assert frame.io == {}
        return
    stored = _recorded(frame, tmp_path / "window.pgio")
    assert frame.dt != 1.0 and len(stored) >= 4  # a window of some seconds: counts, not rates
    exact = 0
    for key in after:  # the recording: whole counts, equal to the view's delta exactly
        for fld in IO_FIELDS:
            d = _delta(before, after, key, fld)
            if key not in stored:  # a row without I/O in the window stores nothing
                assert not d, (key, fld, d)
                continue
            got = stored[key][fld]
            if d is None or (key[1] == "wal" and fld in IO_TIMES):  # unknown: NULL, never 0
                assert got is None, (key, fld, got)
                continue
            want = round(d * 1000) if fld in IO_TIMES else d  # the server counts whole µs
            assert abs(want - d * (1000 if fld in IO_TIMES else 1)) < 1e-6, (key, fld, d)
            if (key, fld) == (OWN, "hits"):
                assert abs(got - want) <= OWN_HITS, (key, fld, got, want)
            else:
                assert got == want, (key, fld, got, want)
                exact += want > 0
    assert exact >= 20, exact  # reads, writes, extends, fsyncs, hits, evictions, reuses, their kB and µs
    checked = 0
    for key in after:
        got = frame.io.get(key)
        for fld in IO_FIELDS:
            d = _delta(before, after, key, fld)
            if got is None:  # a row the tick did not see is one without I/O in the window
                assert not d, (key, fld, d)
                continue
            if d is None:  # an operation this row cannot do: NULL in the view, None here
                assert got[fld] is None, (key, fld)
                continue
            if key[1] == "wal" and fld in IO_TIMES:  # track_wal_io_timing is off: unknown, never 0 ms
                assert got[fld] is None and d == 0, (key, fld)
                continue
            assert got[fld] is not None, (key, fld)
            own = OWN_HITS if (key, fld) == (OWN, "hits") else 1e-9
            assert got[fld] * frame.dt == pytest.approx(d, rel=1e-9, abs=own), (key, fld)
            checked += d > 0
    assert checked >= 15  # the window really did reads, writes, extends, fsyncs, hits, evictions, reuses
    ops = {f: sum((_delta(before, after, k, f) or 0) for k in after) for f in IO_OPS}
    assert all(ops[f] > 0 for f in ("reads", "writes", "extends", "fsyncs", "hits", "evictions", "reuses")), ops
    contexts = {k[2] for k in after if any(_delta(before, after, k, f) for f in IO_OPS)}
    assert {"normal", "bulkread", "vacuum"} <= contexts
    # ms per read and per write: the view's time over its count, by hand
    for key, row in frame.io.items():
        for op in ("read", "write", "fsync"):
            n, ms = _delta(before, after, key, op + "s"), _delta(before, after, key, op + "_ms")
            if n and ms is not None and key[1] != "wal":  # (WAL timing off: checked above)
                assert per_op_ms(row[op + "_ms"], row[op + "s"]) == pytest.approx(ms / n, rel=1e-9), (key, op)
    assert any(per_op_ms(row["read_ms"], row["reads"]) for row in frame.io.values())


@pytest.mark.matrix
def test_times_are_unknown_while_track_io_timing_is_off(make_cluster):
    cluster = make_cluster(autovacuum="off", shared_buffers="2MB", track_io_timing="off")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        sampler.sample(0, 0.0)
        with cluster.connect() as conn:
            conn.execute("CREATE TABLE t AS SELECT g, repeat('x', 300) AS pad FROM generate_series(1, 6000) g")
            conn.execute("CHECKPOINT")
        with cluster.connect() as conn:
            conn.execute("SELECT count(*) FROM t")
        time.sleep(1.5)  # the closed sessions' statistics are published
        frame = sampler.sample(1, 1.0)
        major = cluster.connect().execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
    finally:
        sampler.close()
    if major < 16:
        assert frame.io == {}
        return
    done = [row for row in frame.io.values() if any(row[f] for f in IO_OPS if f != "hits")]
    assert done
    for row in done:
        assert all(row[f] is None for f in IO_TIMES)  # the view says 0: unknown here, never 0 ms
        assert per_op_ms(row["read_ms"], row["reads"]) is None and per_op_ms(row["write_ms"], row["writes"]) is None


@pytest.mark.matrix
def test_bytes_against_blocks_of_a_combined_sequential_scan(make_cluster):
    """18 reads up to io_combine_limit blocks in one operation: bytes / 8 kB is the blocks read, more
    than the reads; 16-17 read one block each (bytes = reads x op_bytes). shared_buffers 32MB and 20
    connections: a backend may pin enough buffers to combine 16 (2MB would allow ~2)."""
    combine = ("SELECT set_config('io_combine_limit', '16', false) "  # 17+: 16 blocks a read at most
               "WHERE current_setting('io_combine_limit', true) IS NOT NULL")
    before, after, frame, major = _window(make_cluster, [combine, "SELECT count(*) FROM t{attempt}"], restart=True,
                                          shared_buffers="32MB", max_connections="20")
    if before is None:
        return
    reads = sum(_delta(before, after, k, "reads") or 0 for k in after if k[1] == "relation")
    nbytes = sum(_delta(before, after, k, "read_kb") or 0 for k in after if k[1] == "relation")
    got_reads = sum((r["reads"] or 0) for k, r in frame.io.items() if k[1] == "relation") * frame.dt
    got_bytes = sum((r["read_kb"] or 0) for k, r in frame.io.items() if k[1] == "relation") * frame.dt
    assert got_reads == pytest.approx(reads, rel=1e-9) and got_bytes == pytest.approx(nbytes, rel=1e-9)
    blocks = nbytes / 8  # kB
    assert blocks >= 250  # most of the ~290-page copy (fillfactor 100) came from the kernel
    if major >= 18:  # several blocks a read
        assert blocks > 2 * reads, (blocks, reads)
    else:
        assert blocks == reads
