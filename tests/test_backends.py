"""Backends and asynchronous I/O: per-process figures equal the raw counters read independently
over the same window (/proc/<pid>/io; 18: pg_stat_get_backend_io), pg_aios in flight on 18, the
AIO wait events as the server names them, and what a recording keeps of it all."""

from __future__ import annotations

import threading
import time

import pytest

from fixture_recording import synthetic_frames, write_fixture
from pgio_tui import metrics as M
from pgio_tui.frame import BACKENDS_TOP, Frame
from pgio_tui.sampler import Sampler
from pgio_tui.sources.backends import LOCAL, ROW, BackendTracker, io_key
from pgio_tui.sources.pg_counters import AIO_WAITS, wait_name
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder


def proc_io(pid: int) -> dict[str, int]:
    """/proc/<pid>/io read and parsed here, independently of the sampler's reader."""
    with open(f"/proc/{pid}/io") as fh:
        return {k: int(v) for k, v in (line.split(":") for line in fh if line.strip())}


def backend_io(conn, pid: int) -> tuple[float, float]:
    return conn.execute("SELECT coalesce(sum(read_bytes), 0)::float8, coalesce(sum(write_bytes), 0)::float8 "
                        "FROM pg_stat_get_backend_io(%s)", (pid,)).fetchone()


def new_table(work, name: str, major: int) -> None:
    work.execute(f"DROP TABLE IF EXISTS {name}")
    work.execute(f"CREATE TABLE {name} (x int, pad text)")
    if major >= 18:
        work.execute("SELECT pg_stat_force_next_flush()")  # its statistics published when idle


def measured_insert(work, look, name: str, major: int) -> tuple[dict, dict, tuple | None, tuple | None]:
    """40,000 rows inserted into `name` by `work`; its /proc/<pid>/io before and after, and on 18
    its pg_stat_get_backend_io (read by `look`) before and after."""
    pid = work.info.backend_pid
    before, pg_before = proc_io(pid), backend_io(look, pid) if major >= 18 else None
    work.execute(f"INSERT INTO {name} SELECT g, repeat('x', 200) FROM generate_series(1, 40000) g")
    if major >= 18:
        work.execute("SELECT pg_stat_force_next_flush()")
        work.execute("SELECT 1")
    return before, proc_io(pid), pg_before, backend_io(look, pid) if major >= 18 else None


def mine(frame: Frame, pid: int) -> dict:
    return next(b for b in frame.backends if b["pid"] == pid)


@pytest.mark.matrix
def test_backend_figures_equal_the_raw_counter_deltas(pg_cluster):
    """/proc/<pid>/io read_bytes/write_bytes over the tick equal the file's own deltas read around
    the work; on 18 pg_stat_get_backend_io's too, and before 18 those figures are absent."""
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        assert sampler.backends.proc_mode == LOCAL  # root on the database host may read any /proc/<pid>/io
        major = sampler.pg.features.major
        with pg_cluster.connect() as work, pg_cluster.connect() as look:
            pid = work.info.backend_pid
            new_table(work, "bk_io", major)
            sampler.sample(0, 0.0)  # the first value of every listed process
            before, after, pg_before, pg_after = measured_insert(work, look, "bk_io", major)
            frame = sampler.sample(1, 1.0)
        b = mine(frame, pid)
        assert after["write_bytes"] - before["write_bytes"] > 1_000_000  # WAL this backend wrote itself
        assert round(b["write_bytes_s"] * frame.dt) == after["write_bytes"] - before["write_bytes"]
        assert round(b["read_bytes_s"] * frame.dt) == after["read_bytes"] - before["read_bytes"]
        assert (b["backend_type"], b["database"], b["state"]) == ("client backend", "postgres", "idle")
        assert [io_key(x) for x in frame.backends] == sorted((io_key(x) for x in frame.backends), reverse=True)
        if major >= 18:
            assert sampler.pg.features.backend_io
            assert pg_after[1] - pg_before[1] > 1_000_000
            assert round(b["pg_write_bytes_s"] * frame.dt) == pg_after[1] - pg_before[1]
            assert round(b["pg_read_bytes_s"] * frame.dt) == pg_after[0] - pg_before[0]
        else:
            assert not sampler.pg.features.backend_io
            assert all(x["pg_read_bytes_s"] is None and x["pg_write_bytes_s"] is None for x in frame.backends)
        if major >= 14:
            assert sampler.pg.features.activity_query_id  # the statement's text can be asked for by it
    finally:
        sampler.close()


@pytest.mark.matrix
def test_aio_in_flight_and_wait_names_on_18(pg_cluster):
    """18: pg_aios rows caught while a backend scans a table read through AIO, summed by state
    and operation; the AIO wait events are exactly those the server lists. Before 18: none."""
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        if sampler.pg.features.major < 18:
            assert not sampler.pg.features.aios
            frame = sampler.sample(0, 0.0)
            assert frame.aio == [] and frame.values[M.AIO_IN_FLIGHT] is None
            return
        assert sampler.pg.features.aios
        assert sampler.settings.get("io_method") in ("worker", "io_uring", "sync")
        with pg_cluster.connect() as c:
            names = {tuple(r) for r in c.execute("SELECT type, name FROM pg_wait_events WHERE name LIKE 'Aio%'")}
            assert names == set(AIO_WAITS)
            c.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
            c.execute("DROP TABLE IF EXISTS bk_scan")
            c.execute("CREATE TABLE bk_scan AS SELECT g, repeat('x', 900) p FROM generate_series(1, 20000) g")
        stop = threading.Event()

        def scan():
            with pg_cluster.connect() as w:
                while not stop.is_set():
                    w.execute("SELECT pg_buffercache_evict_relation('bk_scan')")  # read again, through AIO
                    w.execute("SELECT count(*) FROM bk_scan")

        worker = threading.Thread(target=scan)
        worker.start()
        frames = []
        deadline = time.monotonic() + 20  # a loaded machine may need longer to catch one in flight
        try:
            while time.monotonic() < deadline and sum(1 for f in frames if f.aio) < 5:
                frames.append(sampler.sample(len(frames), len(frames) * 0.01))
        finally:
            stop.set()
            worker.join()
        caught = [f for f in frames if f.aio]
        assert caught, f"no asynchronous I/O in flight in {len(frames)} ticks of a scan"
        for f in frames:
            assert f.values[M.AIO_IN_FLIGHT] == sum(n for _, _, n in f.aio)
        assert {op for f in caught for _, op, _ in f.aio} <= {"readv", "writev", "invalid"}
        assert {st for f in caught for st, _, _ in f.aio} <= {
            "HANDED_OUT", "DEFINED", "STAGED", "SUBMITTED", "COMPLETED_IO", "COMPLETED_SHARED", "COMPLETED_LOCAL"}
    finally:
        sampler.close()


def test_wait_names_mark_aio():
    assert wait_name("IO", "AioIoCompletion") == "AIO IO:AioIoCompletion"
    assert wait_name("IO", "DataFileRead") == "IO:DataFileRead"
    assert wait_name(None, None) == "CPU:Running"


def _row(pid, start, pg=(None, None), state="active"):
    vals = {"pid": pid, "backend_type": "client backend", "application": "app", "database": "db", "state": state,
            "wait_event_type": None, "wait_event": None, "query_start": start, "query_id": None,
            "backend_start": start, "pg_read_bytes": pg[0], "pg_write_bytes": pg[1]}
    return [vals.get(k) for k in ROW]  # autovacuum: a client backend has no query read


def test_tracker_counts_a_new_process_from_zero_and_a_known_one_from_its_last_value():
    """Rates of pg_stat_get_backend_io bytes: a process started since the last tick counts from
    zero, one first seen otherwise has no rate yet, one unlisted for a while keeps its last value,
    a reset counter gives no rate, and the same pid with another start is another process."""
    t = BackendTracker()
    assert t.update([_row(1, 50.0, (100, 1000))], server_t=100.0, dt=None)[0]["pg_write_bytes_s"] is None
    out = t.update([_row(1, 50.0, (100, 3000)), _row(2, 100.5, (0, 800))], server_t=101.0, dt=1.0)
    got = {b["pid"]: b for b in out}
    assert got[1]["pg_write_bytes_s"] == 2000 and got[2]["pg_write_bytes_s"] == 800  # new: from zero
    assert [b["pid"] for b in out] == [1, 2]  # most I/O first
    t.update([], server_t=102.0, dt=1.0)  # both idle: not listed
    out = t.update([_row(1, 50.0, (100, 3500))], server_t=103.0, dt=1.0)
    assert out[0]["pg_write_bytes_s"] == 500
    assert t.update([_row(1, 50.0, (0, 10))], server_t=104.0, dt=1.0)[0]["pg_write_bytes_s"] is None  # reset
    # the pid reused by a process started since: its own counters from zero, not the old one's delta (0)
    assert t.update([_row(1, 200.0, (0, 10))], server_t=205.0, dt=1.0)[0]["pg_write_bytes_s"] == 10
    t.reset()
    assert t.update([_row(1, 50.0, (0, 20))], server_t=206.0, dt=1.0)[0]["pg_write_bytes_s"] is None


def test_recording_keeps_the_top_backends_with_io_and_aio(tmp_path):
    """The file keeps, per tick, the BACKENDS_TOP backends with any I/O (bytes over the tick, the
    query's start, its statement) and pg_aios rows; replay gives them back as the live frame had them."""
    frames = list(synthetic_frames(20, major=18))
    path = write_fixture(tmp_path / "b.pgio", n=20, major=18)
    with Recording(path) as rec:
        back = {f.tick: f for f in rec.frames()}
        texts = rec.statement_texts()
    assert any(f.backends for f in frames)
    for f in frames:
        want = [b for b in f.backends if io_key(b) > 0][:BACKENDS_TOP]
        got = back[f.tick].backends
        assert [b["pid"] for b in got] == [b["pid"] for b in want]
        for w, g in zip(want, got):
            for k in ("backend_type", "application", "database", "state", "wait_event_type", "wait_event", "query_id"):
                assert g[k] == w[k], k
            for k in ("read_bytes_s", "write_bytes_s", "pg_read_bytes_s", "pg_write_bytes_s"):
                assert g[k] == pytest.approx(w[k], rel=2e-3, abs=1e-6), k  # the stored dt has 1 ms steps
            if w["query_start"] is not None:
                assert g["query_start"] == pytest.approx(w["query_start"], abs=0.002)
        assert back[f.tick].aio == sorted(f.aio)
        assert back[f.tick].values.get(M.AIO_IN_FLIGHT) == f.values.get(M.AIO_IN_FLIGHT)
    # the statements the backends ran: their text is the statements table's
    assert {b["query_id"] for f in back.values() for b in f.backends if b["query_id"]} <= set(texts)


def test_an_older_recording_without_backend_tables_reads(tmp_path):
    """A file written before the backend tables existed (no backend_io, aio) is read: no backends."""
    path = tmp_path / "old.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in synthetic_frames(5):
            rec.write(f)
    import sqlite3
    conn = sqlite3.connect(path)
    for table in ("backend_io_named",):
        conn.execute(f"DROP VIEW {table}")
    for table in ("backend_io", "aio", "backends"):
        conn.execute(f"DROP TABLE {table}")
    conn.commit()
    conn.close()
    with Recording(path) as rec:
        frames = list(rec.frames())
    assert frames and all(f.backends == [] and f.aio == [] for f in frames)


def test_autovacuum_queries_are_told_once_each_and_no_other_query_is_read():
    """A worker's query is an event when it begins (or the worker moves to the next table), once; a
    client backend's row never carries a query (the SQL reads it for autovacuum workers alone), and a
    text that is not the server's autovacuum line is not told."""
    def av(pid, text):
        return [*_row(pid, 50.0)[:1], "autovacuum worker", *_row(pid, 50.0)[2:-1], text]
    t = BackendTracker()
    first = [av(7, "autovacuum: VACUUM public.t (to prevent wraparound)"), _row(1, 50.0)]
    assert t.vacuums(first) == ["autovacuum: VACUUM public.t (to prevent wraparound)"]
    assert t.vacuums(first) == []  # still at it
    assert t.vacuums([av(7, "autovacuum: ANALYZE public.u")]) == ["autovacuum: ANALYZE public.u"]
    assert t.vacuums([av(8, "SELECT secret"), av(9, "autovacuum: VACUUM x\x1b[31m")]) == ["autovacuum: VACUUM x\\x1b[31m"]
    assert t.vacuums([]) == [] and t.vacuums([av(7, "autovacuum: ANALYZE public.u")]) == ["autovacuum: ANALYZE public.u"]
