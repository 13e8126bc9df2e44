"""Truth: every view-kind metric against the view's own columns, read apart from the sampler.

Counters: a recording of driven ticks over pgbench runs, a CHECKPOINT, a sort spilling to a
temporary file and a last CHECKPOINT (the background writer then has nothing left to write); each
counter's recorded rate x dt summed over the recording against the view's delta read by hand (its
own SQL here, not the sampler's) once the statistics settled before the first tick and after the
last (tests/view_counters.py's pattern: the last tick pays out every spread burst).
Statements: pg_stat_statements read by hand at every tick (the reading session untracked), each top
statement's figures over each window against that window's delta. Gauges: in a quiet moment
(nothing runs, nothing changes between the reads around the tick) the tick's value against the view.

Tolerances, and why:
- counters of processes that are not the observer or this test's reader (writes, fsyncs, extends,
  writebacks, bgwriter, WAL, pg_stat_io rows of the checkpointer, background writer, walwriter,
  autovacuum): exact, to the recording's precision (whole events per tick; ms/s to 0.001 per tick).
- counters the observer's and this reader's own queries also move (pg_stat_database's xact, blks_hit,
  blks_read, blk_read_time, buffers.alloc and evictions (a read into full shared buffers evicts), the client backend's pg_stat_io hits and reads): within
  the observer's own traffic in three ticks (its database's row's delta over one tick: its first and
  last ticks' transactions are published by its backend after the reads that bracket the recording,
  and before 15 the collector's file the reads see may be 0.5 s old: there, 1 % more; 13 missed ~250
  of 32,000 hits, a constant share, which the observer's and this reader's rows do not explain)
  plus this reader's over the window (its own database's row: it reads between the ticks, and
  publishes at most once a second).
- per-statement figures (each top statement over each window): rate x window_s equal to the delta
  (1e-6 relative), mean and stddev recomputed from the deltas (1e-6, 1e-4: the sum of squares is
  rebuilt from pg_stat_statements' mean and stddev). statements.mean_ms and stddev_ms likewise, every
  tick; statements.calls_s: its implied window (calls / rate) within 20 ms of the ticks' times (its
  window is the server's clock between the reads, which the test cannot read).
- gauges: exact in a quiet moment (db.backends, sessions, pg_aios, buffers.used and buffers.dirty)
  or within the control file's whole seconds (checkpoint.time_progress: 1 s / checkpoint_timeout);
  checkpoint.wal_progress equal to the catalog's formula from pg_control_checkpoint() and the
  settings (PostgreSQL's own trigger ends at a segment boundary: up to one segment apart).
"""

from __future__ import annotations

import math
import subprocess
import time

import pytest
from view_counters import settled

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.pg_binaries import find_client

_IO_FIELDS = ("reads", "writes", "extends", "fsyncs", "writebacks", "hits", "evictions")
_STATEMENT_RATES = {"calls_s": "calls", "time_ms_s": "total_exec_time", "rows_s": "rows", "hit_s": "shared_blks_hit",
                    "read_s": "shared_blks_read", "dirtied_s": "shared_blks_dirtied",
                    "written_s": "shared_blks_written", "read_time_ms_s": "read_time",
                    "write_time_ms_s": "write_time", "temp_written_s": "temp_blks_written",
                    "wal_bytes_s": "wal_bytes"}
_COUNTERS = (M.WRITES_CHECKPOINTER, M.WRITES_BGWRITER, M.WRITES_BACKEND, M.WRITES_AUTOVACUUM, M.WRITES_OTHER,
             M.FSYNCS_BACKEND, M.FSYNCS_CHECKPOINTER, M.EXTENDS_BACKEND, M.WRITEBACKS_TOTAL,
             M.BGWRITER_MAXWRITTEN_S, M.BUFFERS_ALLOC_S, M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.DB_XACT_S,
             M.DB_TEMP_BYTES_S, M.DB_BLK_READ_TIME_MS_S, M.DB_BLK_WRITE_TIME_MS_S, M.WAL_BYTES_S, M.WAL_RECORDS_S,
             M.WAL_FPI_S, M.WAL_BUFFERS_FULL_S, M.WAL_WRITES_S, M.WAL_SYNCS_S, M.WAL_WRITE_TIME_MS_S,
             M.WAL_SYNC_TIME_MS_S, M.BUFFERS_EVICTIONS_S)
# the observer's own queries move these (see the docstring): compared within its traffic of two ticks
_OBSERVER_MOVES = {M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.DB_XACT_S, M.BUFFERS_ALLOC_S, M.DB_BLK_READ_TIME_MS_S,
                   M.BUFFERS_EVICTIONS_S}
_OBSERVER_IO = {("client backend", "hits"), ("client backend", "reads"), ("client backend", "evictions")}
_OWN_ROWS = ("postgres_db", "probe_db")
_GAUGES = (M.DB_BACKENDS, M.SESSIONS_ACTIVE, M.SESSIONS_IO_WAIT, M.SESSIONS_LOCK_WAIT, M.BUFFERS_USED, M.BUFFERS_DIRTY,
           M.AIO_IN_FLIGHT, M.CHECKPOINT_TIME_PROGRESS, M.CHECKPOINT_WAL_PROGRESS)

# Ticks on their schedule, as `record` takes them: a recording keeps a rate to one event per nominal
# interval, so n events in a tick of dt = interval are stored as n. Each step of the workload fits in one.
INTERVAL_S = 3.0

# metric -> reference kind (metrics.REFERENCE_KINDS): the views named above, read by hand
CHECKS = {**dict.fromkeys(_COUNTERS, "view"), **dict.fromkeys(_GAUGES, "view"),
          **{f"io.<backend_type>.{f}": "view" for f in _IO_FIELDS},
          **{f"statement.<queryid>.{f}": "view" for f in (*_STATEMENT_RATES, "mean_ms", "stddev_ms")},
          M.STATEMENTS_CALLS_S: "view", M.STATEMENTS_MEAN_MS: "view", M.STATEMENTS_STDDEV_MS: "view"}


def _has(conn, relation: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (relation,)).fetchone()[0]


def _columns(conn, relation: str) -> set[str]:
    return {r[0] for r in conn.execute("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                                       "AND attnum > 0", (relation,))}


def _counters(conn) -> dict:
    """Every view-kind counter, cumulative, by metric name (None where this server has no such
    column), and the pg_stat_io rows as ('io', backend_type, field)."""
    one = lambda sql: conn.execute(sql).fetchone()  # noqa: E731
    out: dict = {}
    bg = dict(zip(("maxwritten_clean", "buffers_alloc"),
                  one("SELECT maxwritten_clean, buffers_alloc FROM pg_stat_bgwriter")))
    out[M.BGWRITER_MAXWRITTEN_S], out[M.BUFFERS_ALLOC_S] = bg["maxwritten_clean"], bg["buffers_alloc"]
    io = {}
    if _has(conn, "pg_catalog.pg_stat_io"):
        for bt, *vals in conn.execute(
                "SELECT backend_type, " + ", ".join(f"sum({f})" for f in _IO_FIELDS)
                + " FROM pg_stat_io WHERE object = 'relation' GROUP BY backend_type"):
            io[bt] = dict(zip(_IO_FIELDS, (None if v is None else float(v) for v in vals)))
            out.update({("io", bt, f): v for f, v in io[bt].items()})
        named = {"checkpointer": M.WRITES_CHECKPOINTER, "background writer": M.WRITES_BGWRITER,
                 "client backend": M.WRITES_BACKEND, "autovacuum worker": M.WRITES_AUTOVACUUM}
        for m in (*named.values(), M.WRITES_OTHER, M.WRITEBACKS_TOTAL):
            out[m] = 0.0
        for bt, row in io.items():
            out[named.get(bt, M.WRITES_OTHER)] += row["writes"] or 0
            out[M.WRITEBACKS_TOTAL] += row["writebacks"] or 0
        out[M.FSYNCS_BACKEND] = io["client backend"]["fsyncs"]
        out[M.EXTENDS_BACKEND] = io["client backend"]["extends"]
        out[M.FSYNCS_CHECKPOINTER] = io["checkpointer"]["fsyncs"]
        out[M.BUFFERS_EVICTIONS_S] = sum(row["evictions"] or 0 for row in io.values())
    else:  # 13-15: pg_stat_bgwriter
        ck, cl, be, bf = one("SELECT buffers_checkpoint, buffers_clean, buffers_backend, buffers_backend_fsync "
                             "FROM pg_stat_bgwriter")
        out.update({M.WRITES_CHECKPOINTER: ck, M.WRITES_BGWRITER: cl, M.WRITES_BACKEND: be, M.FSYNCS_BACKEND: bf,
                    M.WRITES_AUTOVACUUM: None, M.WRITES_OTHER: None, M.FSYNCS_CHECKPOINTER: None,
                    M.EXTENDS_BACKEND: None, M.WRITEBACKS_TOTAL: None, M.BUFFERS_EVICTIONS_S: None})
    db = one("SELECT sum(blks_read), sum(blks_hit), sum(xact_commit + xact_rollback), sum(temp_bytes), "
             "sum(blk_read_time), sum(blk_write_time) FROM pg_stat_database")
    out.update(zip((M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.DB_XACT_S, M.DB_TEMP_BYTES_S, M.DB_BLK_READ_TIME_MS_S,
                    M.DB_BLK_WRITE_TIME_MS_S), (float(v) for v in db)))
    for row in ("postgres", "probe"):  # the observer's database, and this reader's
        out[f"{row}_db"] = one("SELECT json_build_array(blks_read, blks_hit, xact_commit + xact_rollback, "
                               f"blk_read_time) FROM pg_stat_database WHERE datname = '{row}'")[0]
    out[M.WAL_BYTES_S] = float(one("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')")[0])
    wal = (M.WAL_RECORDS_S, M.WAL_FPI_S, M.WAL_BUFFERS_FULL_S, M.WAL_WRITES_S, M.WAL_SYNCS_S, M.WAL_WRITE_TIME_MS_S,
           M.WAL_SYNC_TIME_MS_S)
    if not _has(conn, "pg_catalog.pg_stat_wal"):
        out.update(dict.fromkeys(wal, None))
    elif "wal_write" in _columns(conn, "pg_catalog.pg_stat_wal"):  # 14-17
        out.update(zip(wal, map(float, one("SELECT wal_records, wal_fpi, wal_buffers_full, wal_write, wal_sync, "
                                           "wal_write_time, wal_sync_time FROM pg_stat_wal"))))
    else:  # 18: WAL I/O moved to pg_stat_io (object wal; context init is segment zero-filling, never counted)
        out.update(zip(wal, map(float, one(
            "SELECT wal_records, wal_fpi, wal_buffers_full, (SELECT sum(writes) FROM pg_stat_io WHERE object = 'wal' "
            "AND context = 'normal'), (SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal' AND context = "
            "'normal'), (SELECT sum(write_time) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal'), "
            "(SELECT sum(fsync_time) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') FROM pg_stat_wal"))))
    return out


def _quiet_part(c: dict) -> dict:
    """The counters neither the observer nor this reader move: equal twice = nothing running."""
    return {k: v for k, v in c.items() if k not in _OBSERVER_MOVES and k not in _OWN_ROWS
            and not (isinstance(k, tuple) and (k[1], k[2]) in _OBSERVER_IO)}


def _settled(probe) -> dict:
    """Every counter, once those nobody but the workload moves have settled (this reader's and the
    observer's own keep moving as they read: before 15 the collector publishes them every 0.5 s)."""
    settled(lambda: _quiet_part(_counters(probe)), "the views' counters")
    return _counters(probe)


def _pgbench(cluster, *args: str) -> None:
    r = subprocess.run([str(find_client("pgbench")), "-h", str(cluster.sockdir), "-p", str(cluster.port),
                        "-U", "postgres", *args, "work"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def _until(t: float) -> None:
    time.sleep(max(0.0, t - time.monotonic()))


def _sql(cluster, db: str, *statements: str) -> None:
    with cluster.connect(db, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def _recorded_sums(path) -> tuple[dict, dict, int, float]:
    """Each counter's rate x dt summed over the recording, the error the stored dt's rounding allows,
    the recording's ticks and seconds."""
    sums: dict = {}
    dt_err: dict = {}  # the stored dt is kept to 1 ms: each tick's rate x 0.0005 s
    n, seconds = 0, 0.0
    with Recording(path) as rec:
        for frame in rec.frames():
            n += 1
            if n == 1:  # the baseline: its rates cover the time before the recorded window
                continue
            seconds += frame.dt
            rows = [(m, frame.values.get(m)) for m in _COUNTERS]
            rows += [(("io", bt, f), v) for bt, row in frame.sources.items() for f, v in row.items()]
            for key, v in rows:
                if v is not None or sums.get(key) is not None:
                    sums[key] = (sums.get(key) or 0.0) + (v or 0.0) * frame.dt
                    dt_err[key] = dt_err.get(key, 0.0) + abs(v or 0.0) * 0.0005
    return sums, dt_err, n, seconds


@pytest.mark.matrix
def test_counters_summed_over_a_recording_equal_the_views_delta(make_cluster, tmp_path, capsys):
    cluster = make_cluster(autovacuum="off", shared_buffers="16MB", bgwriter_delay="50ms", max_wal_size="64MB",
                           checkpoint_timeout="1h", wal_buffers="64kB")
    admin = cluster.connect(autocommit=True)
    admin.execute("CREATE DATABASE work")
    admin.execute("CREATE DATABASE probe")
    if "track_wal_io_timing" in {r[0] for r in admin.execute("SELECT name FROM pg_settings")}:
        admin.execute("ALTER SYSTEM SET track_wal_io_timing = on")
        admin.execute("SELECT pg_reload_conf()")
    _pgbench(cluster, "-i", "-q", "-s", "4")
    admin.execute("CHECKPOINT")
    probe = cluster.connect("probe", autocommit=True)
    sampler = Sampler(cluster.conninfo(), interval=INTERVAL_S)
    sampler.open()
    steps = [lambda: _pgbench(cluster, "-n", "-c", "2", "-t", "300"),
             lambda: admin.execute("CHECKPOINT"),
             lambda: _pgbench(cluster, "-n", "-c", "2", "-t", "300"),
             lambda: _pgbench(cluster, "-n", "-S", "-c", "2", "-t", "500"),
             lambda: _sql(cluster, "work", "SET work_mem = '64kB'",  # a sort spilling to a temporary file
                          "SELECT count(*) FROM (SELECT * FROM pgbench_accounts ORDER BY filler DESC) x"),
             # nothing left dirty: the background writer's floor scan (the whole pool in 2 min) would
             # otherwise keep writing the workload's buffers a few at a time after the last tick
             lambda: admin.execute("CHECKPOINT")]
    try:
        for tick in range(4):  # warm-up: the observer's first reads of the catalog are done
            sampler.sample(tick, float(tick))
        for attempt in range(3):
            path, tick0 = tmp_path / f"view-{attempt}.pgio", 10 + 20 * attempt
            with Recorder(path) as rec:
                rec.set_meta(interval_s=INTERVAL_S)
                before = _settled(probe)
                start = time.monotonic()
                sampler.server.final = True  # the baseline: what came before is paid out here, outside the sums
                rec.write(sampler.sample(tick0, 0.0))
                sampler.server.final = False
                now = _quiet_part(_counters(probe))
                if now != _quiet_part(before):
                    print(f"attempt {attempt}: moved around the first tick: "
                          f"{ {k: (before[k], v) for k, v in now.items() if before.get(k) != v} }")
                    continue
                for k, step in enumerate(steps, 1):
                    step()
                    _until(start + k * INTERVAL_S)
                    rec.write(sampler.sample(tick0 + k, k * INTERVAL_S))
                after = settled(lambda: _quiet_part(_counters(probe)), "the views' counters")
                o0 = _counters(probe)["postgres_db"]
                k = math.ceil((time.monotonic() - start) / INTERVAL_S)
                _until(start + k * INTERVAL_S)
                sampler.server.final = True  # the recording's last tick: every spread burst paid out
                rec.write(sampler.sample(tick0 + k, k * INTERVAL_S))
                sampler.server.final = False
            final = _settled(probe)
            if _quiet_part(final) == after:
                break
            moved = {k: (after[k], v) for k, v in _quiet_part(final).items() if after.get(k) != v}
            print(f"attempt {attempt}: moved around the last tick: {moved}")
        else:
            pytest.fail("the server never stayed quiet around the recording")
    finally:
        sampler.close()
    collector = probe.info.server_version < 150000  # the statistics collector's file, up to 0.5 s old
    fields = ("reads", "hits", "xact", "read_time")
    obs = dict(zip(fields, (b - a for a, b in zip(o0, final["postgres_db"]))))
    own = dict(zip(fields, (b - a for a, b in zip(before["probe_db"], final["probe_db"]))))
    observer_field = {M.DB_BLKS_READ_S: "reads", M.BUFFERS_ALLOC_S: "reads", M.DB_BLKS_HIT_S: "hits",
                      M.DB_XACT_S: "xact", M.DB_BLK_READ_TIME_MS_S: "read_time",
                      M.BUFFERS_EVICTIONS_S: "reads", ("io", "client backend", "reads"): "reads",
                      ("io", "client backend", "evictions"): "reads", ("io", "client backend", "hits"): "hits"}
    sums, dt_err, ticks, seconds = _recorded_sums(path)
    lines, exercised = [], []
    for key, ref_after in final.items():
        if key in _OWN_ROWS:
            continue
        ref = None if ref_after is None else ref_after - (before.get(key) or 0.0)
        got = sums.get(key)
        name = key if isinstance(key, str) else f"io.{key[1]}.{key[2]}"
        if ref is None and isinstance(key, tuple):  # pg_stat_io's NULL: an operation this type never does
            assert not got, f"{name}: {got} recorded where the view has no such operation"
            continue
        if ref is None:
            assert got is None, f"{name}: {got} recorded where the server has no such counter"
            continue
        if got is None and ref == 0 and isinstance(key, tuple):
            continue  # 16+: a backend type's pg_stat_io rows are recorded only once it does I/O
        assert got is not None, f"{name}: nothing recorded, the view moved {ref}"
        unit = M.BY_NAME[key].unit if isinstance(key, str) else M.SOURCE_METRICS[0].unit
        # the recording's precision: a rate of events to one event per nominal interval (n events in a
        # tick of dt are kept as round(n x interval / dt) x dt / interval: half an event per interval),
        # ms/s to 0.001 ms per second, dt to 1 ms
        tol = 1e-6 * max(1.0, abs(ref)) + dt_err[key] + (
            0.0005 * seconds if unit == "ms/s" else 0.5 * seconds / INTERVAL_S if unit.per_tick else 0.0)
        if key in observer_field:
            tol += 3 * max(obs[observer_field[key]], 1.0) + own[observer_field[key]] + (0.01 * abs(ref) if collector else 0)
        lines.append(f"{name}: recorded {got:,.3f}, view {ref:,.3f} (tolerance {tol:g})")
        if ref:
            exercised.append(name)
        assert abs(got - ref) <= tol, f"{name}: recorded {got} vs the view's delta {ref} (tolerance {tol})"
    with capsys.disabled():
        print(f"\n{len(lines)} counters over {ticks} ticks ({seconds:.1f} s), {len(exercised)} moved; observer "
              f"per tick {obs}, this reader over the window {own}:\n  " + "\n  ".join(lines))
    for must in (M.WRITES_CHECKPOINTER, M.WRITES_BACKEND, M.DB_TEMP_BYTES_S, M.WAL_BYTES_S, M.DB_XACT_S):
        assert must in exercised, f"the workload did not move {must}"


def _pgss(probe, cols: set[str]) -> dict:
    """pg_stat_statements read by hand: per queryid (top-level, summed over users and databases) the
    counters of STATEMENT_FIELDS and the sum of squared times, pgio-tui's own statements left out."""
    col = {"read_time": "shared_blk_read_time" if "shared_blk_read_time" in cols else "blk_read_time",
           "write_time": "shared_blk_write_time" if "shared_blk_write_time" in cols else "blk_write_time"}
    exprs = [f"sum({col.get(c, c)})::float8" for c in _STATEMENT_RATES.values()]
    top = " AND toplevel" if "toplevel" in cols else ""
    rows = probe.execute(
        f"SELECT queryid, {', '.join(exprs)}, sum(calls * (stddev_exec_time ^ 2 + mean_exec_time ^ 2))::float8 "
        f"FROM pg_stat_statements WHERE query NOT LIKE '%%pgio-tui%%'{top} GROUP BY queryid").fetchall()
    return {q: dict(zip((*_STATEMENT_RATES, "sumsq"), vals)) for q, *vals in rows}


@pytest.mark.matrix
def test_statement_figures_equal_pg_stat_statements_deltas(make_cluster, capsys):
    """Ticks driven by hand; between them a workload runs, then pg_stat_statements is read here by
    a session that pg_stat_statements does not track (pg_stat_statements.track = none), so each read
    here equals what the next tick reads. statements.* (every tick) and each top statement's figures
    (every window, STATEMENT_WINDOW_S of ticks) against the deltas between the matching reads here."""
    cluster = make_cluster(**{"pg_stat_statements.track_utility": "off", "autovacuum": "off"})
    probe = cluster.connect(autocommit=True)
    probe.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    probe.execute("SET pg_stat_statements.track = 'none'")
    cols = _columns(probe, "pg_stat_statements")
    work = cluster.connect(autocommit=True)
    work.execute("CREATE TABLE s (id int, pad text)")
    work.execute("SET work_mem = '64kB'")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    snaps, frames = [], []
    try:
        for k in range(125):  # two windows and more (10 s of 0.2 s ticks each)
            if k:
                work.execute("INSERT INTO s SELECT g, repeat('y', 300) FROM generate_series(1, %s) g", (50 + k % 7,))
                work.execute("SELECT count(*) FROM s WHERE id < %s", (k % 13,))
                if k % 10 == 0:
                    work.execute("SELECT count(*) FROM (SELECT * FROM s ORDER BY pad, id) x")  # temp blocks
                    work.execute("SELECT pg_sleep(0.002 * %s)", (k % 3,))
            snaps.append(_pgss(probe, cols))
            frames.append(sampler.sample(k, k * 0.2))
    finally:
        sampler.close()
    # statements.*: every tick that read the sums, against the reads here since the last one that did
    last, sums_checked = None, 0
    for k, frame in enumerate(frames):
        v = frame.values
        if v.get(M.STATEMENTS_CALLS_S) is None:
            continue
        if last is not None:
            a, b = snaps[last], snaps[k]
            d = {f: sum(b[q][f] for q in b) - sum(a.get(q, {}).get(f) or 0 for q in b) for f in ("calls_s", "time_ms_s", "sumsq")}
            span = frame.t - frames[last].t
            # the rate's window is the server's clock between the reads, span the client's between answers
            if d["calls_s"]:
                assert abs(d["calls_s"] / v[M.STATEMENTS_CALLS_S] - span) <= 0.02, \
                    f"tick {k}: calls_s {v[M.STATEMENTS_CALLS_S]} for {d['calls_s']} calls in {span} s"
            else:
                assert v[M.STATEMENTS_CALLS_S] == 0
            if d["calls_s"]:
                mean = d["time_ms_s"] / d["calls_s"]
                assert v[M.STATEMENTS_MEAN_MS] == pytest.approx(mean, rel=1e-6), f"tick {k} mean"
                sd = max(0.0, d["sumsq"] / d["calls_s"] - mean * mean) ** 0.5
                assert v[M.STATEMENTS_STDDEV_MS] == pytest.approx(sd, rel=1e-4, abs=1e-6), f"tick {k} stddev"
            sums_checked += 1
        last = k
    # each top statement, over each window
    reads = [k for k, f in enumerate(frames) if f.values.get(M.STATEMENTS_WINDOW_S) is not None]
    first_read = next(k for k, f in enumerate(frames) if k < reads[0] and f.statements == [] and
                      abs(frames[reads[0]].t - f.t - frames[reads[0]].values[M.STATEMENTS_WINDOW_S]) < 0.05)
    stmt_checked = 0
    for a, b in zip([first_read, *reads], reads):
        window = frames[b].values[M.STATEMENTS_WINDOW_S]
        for row in frames[b].statements:
            q = row["queryid"]
            old, new = snaps[a].get(q, {}), snaps[b][q]
            delta = {f: (new[f] or 0) - (old.get(f) or 0) for f in new}
            for f in _STATEMENT_RATES:
                got = row[f] * window if row[f] is not None else None
                if new[f] is None:
                    assert row[f] is None, f"{q} {f}"
                    continue
                assert got == pytest.approx(delta[f], rel=1e-6, abs=1e-6), f"queryid {q} {f}: {got} vs {delta[f]}"
            if delta["calls_s"]:
                mean = delta["time_ms_s"] / delta["calls_s"]
                assert row["mean_ms"] == pytest.approx(mean, rel=1e-6)
                sd = max(0.0, delta["sumsq"] / delta["calls_s"] - mean * mean) ** 0.5
                assert row["stddev_ms"] == pytest.approx(sd, rel=1e-4, abs=1e-6), f"queryid {q} stddev"
            stmt_checked += 1
    assert sums_checked > 50 and stmt_checked >= 4 and len(reads) >= 2
    with capsys.disabled():
        print(f"\nstatements.*: {sums_checked} ticks; top statements: {stmt_checked} rows over {len(reads)} windows")


def _gauges(probe, observer_pid: int, bufcache: bool, aios: bool) -> dict:
    one = lambda sql: probe.execute(sql).fetchone()  # noqa: E731
    act = f"FROM pg_stat_activity WHERE pid NOT IN ({observer_pid}, pg_backend_pid())"
    out = {M.DB_BACKENDS: float(one("SELECT sum(numbackends) FROM pg_stat_database")[0]),
           M.SESSIONS_ACTIVE: one(f"SELECT count(*) {act} AND backend_type = 'client backend' AND state = 'active'")[0],
           M.SESSIONS_IO_WAIT: one(f"SELECT count(*) {act} AND wait_event_type = 'IO'")[0],
           M.SESSIONS_LOCK_WAIT: one(f"SELECT count(*) {act} AND wait_event_type IN ('Lock', 'LWLock')")[0]}
    if bufcache:
        out[M.BUFFERS_USED], out[M.BUFFERS_DIRTY] = one("SELECT buffers_used, buffers_dirty FROM pg_buffercache_summary()")
    out[M.AIO_IN_FLIGHT] = one("SELECT count(*) FROM pg_aios")[0] if aios else None
    ckpt_t, redo, seg, timeout, max_wal_mb, cct = one(
        "SELECT extract(epoch FROM checkpoint_time), pg_wal_lsn_diff(redo_lsn, '0/0'), "
        "(SELECT setting::int8 FROM pg_settings WHERE name = 'wal_segment_size'), "
        "(SELECT setting::int FROM pg_settings WHERE name = 'checkpoint_timeout'), "
        "(SELECT setting::int8 * CASE unit WHEN 'MB' THEN 1 ELSE 0 END FROM pg_settings WHERE name = 'max_wal_size'), "
        "current_setting('checkpoint_completion_target')::float8 FROM pg_control_checkpoint()")
    insert = float(one("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')")[0])
    # PostgreSQL's own trigger (xlog.c): CheckPointSegments = floor(max_wal_size / segment / (1 + cct));
    # a checkpoint is due once WAL fills the segment CheckPointSegments - 1 after the redo point's segment
    segments = max(1, int(max_wal_mb * 1024 * 1024 / seg / (1 + cct)))
    out["wal_due"] = (insert - float(redo), segments * seg - float(redo) % seg, segments * seg)
    out["time"] = (float(ckpt_t), timeout)
    return out


@pytest.mark.matrix
def test_gauges_equal_the_views_in_a_quiet_moment(make_cluster, capsys):
    """Sessions waiting on a lock and sleeping, idle ones; the tick's gauges against the views read
    here just before and after it (equal reads: a quiet moment). Exact, but for time_progress (the
    control file's checkpoint time is whole seconds: 1 s / checkpoint_timeout) and wal_progress (the
    catalog's trigger distance is whole segments from the redo point; PostgreSQL's ends at a segment
    boundary, so the redo point's offset in its segment, up to one segment, separates them)."""
    import threading

    cluster = make_cluster(autovacuum="off")
    probe = cluster.connect(autocommit=True)
    bufcache = probe.execute("SELECT to_regproc('pg_buffercache_summary') IS NOT NULL OR EXISTS (SELECT FROM "
                             "pg_available_extension_versions WHERE name = 'pg_buffercache' AND "
                             "version >= '1.4')").fetchone()[0]
    if bufcache:
        probe.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
    aios = _has(probe, "pg_catalog.pg_aios")
    probe.execute("CREATE TABLE g (id int)")
    probe.execute("INSERT INTO g SELECT generate_series(1, 50000)")
    holder = cluster.connect(autocommit=True)
    holder.execute("BEGIN")
    holder.execute("LOCK TABLE g IN ACCESS EXCLUSIVE MODE")
    idle = [cluster.connect(autocommit=True) for _ in range(2)]
    threads = [threading.Thread(target=lambda: cluster.connect(autocommit=True).execute("SELECT count(*) FROM g")),
               threading.Thread(target=lambda: cluster.connect(autocommit=True).execute("SELECT pg_sleep(18)"))]
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    checked = dict.fromkeys(_GAUGES, 0)
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)
        pid = sampler.pg.conn.info.backend_pid
        for k in range(8):  # over 10 s: pg_buffercache is read every 10 s
            time.sleep(1.5)
            before = _gauges(probe, pid, bufcache, aios)
            frame = sampler.sample(k, float(k))
            after = _gauges(probe, pid, bufcache, aios)
            if {m: before.get(m) for m in _GAUGES} != {m: after.get(m) for m in _GAUGES}:
                continue
            v = frame.values
            for m in (M.DB_BACKENDS, M.SESSIONS_ACTIVE, M.SESSIONS_IO_WAIT, M.SESSIONS_LOCK_WAIT, M.AIO_IN_FLIGHT,
                      M.BUFFERS_USED, M.BUFFERS_DIRTY):
                if m in (M.BUFFERS_USED, M.BUFFERS_DIRTY) and (not bufcache or v.get(m) is None):
                    assert bufcache or v.get(m) is None
                    continue  # read every few seconds: null in between
                assert v[m] == before[m], f"tick {k} {m}: {v[m]} vs the view {before[m]}"
                checked[m] += 1
            if v.get(M.CHECKPOINT_TIME_PROGRESS) is not None:
                start, timeout = before["time"]
                want = (frame.t - start) / timeout
                assert abs(v[M.CHECKPOINT_TIME_PROGRESS] - want) <= 1.0 / timeout + 1e-9, (v[M.CHECKPOINT_TIME_PROGRESS], want)
                checked[M.CHECKPOINT_TIME_PROGRESS] += 1
            since, due, catalog = before["wal_due"]
            assert v[M.CHECKPOINT_WAL_PROGRESS] == pytest.approx(since / catalog, rel=1e-6)  # whole segments
            checked[M.CHECKPOINT_WAL_PROGRESS] += 1
    finally:
        holder.execute("ROLLBACK")
        for t in threads:
            t.join()
        sampler.close()
    assert checked[M.SESSIONS_LOCK_WAIT] and checked[M.SESSIONS_ACTIVE], checked
    assert checked[M.BUFFERS_USED] or not bufcache, checked
    with capsys.disabled():
        print(f"\nquiet ticks checked per gauge: {checked}")
