"""With many processes the tick reads pg_stat_activity every k-th tick (sources/backends.backends_every):
the ticks between take no wait sample (session counts unknown, no waits, no backends) and do not
run the part at all, and per-process rates at the next read are over the whole stride. The
threshold is lowered here so that a test cluster's few processes make k > 1."""

from __future__ import annotations

import pytest
from psycopg import sql as S

from pgio_tui import metrics as M
from pgio_tui.analysis.align import window
from pgio_tui.experiments.figures import waits_over_time
from pgio_tui.frame import Frame
from pgio_tui.sampler import Sampler
from pgio_tui.sampler.backends_tick import backends_tick
from pgio_tui.sources import backends as backends_mod
from pgio_tui.sources.backends import ROW, BackendTracker, backends_every
from pgio_tui.sources.postgres import PLAN_CACHE_MODE
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.history import FrameHistory
from fixture_recording import synthetic_frames
from test_backends import measured_insert, new_table

SESSIONS = (M.SESSIONS_ACTIVE, M.SESSIONS_IO_WAIT, M.SESSIONS_LOCK_WAIT)


def test_the_stride_keeps_the_parts_mean_cost_at_the_thresholds():
    assert [backends_every(n) for n in (None, 0, 20, 300)] == [1, 1, 1, 1]
    assert backends_every(301) == 2 and backends_every(1000) == 4 and backends_every(1400) == 7
    ks = [backends_every(n) for n in range(300, 5000, 50)]
    assert ks == sorted(ks)  # more processes, never more often


def test_unsampled_ticks_are_unknown_and_rates_span_the_stride(pg_cluster, monkeypatch):
    """Every tick reads pg_stat_activity or not as the stride says; one that does not has no
    backends rows (the part returned nothing), None session counts and no waits; one that does has
    them all. A backend's /proc (and on 18 pg_stat_get_backend_io) bytes over a stride equal its
    rates at the next read times the time since the last one."""
    monkeypatch.setattr(backends_mod, "BACKENDS_EVERY_TICK_UP_TO", 1)  # a few processes are "many"
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    server = sampler.server
    try:
        major = sampler.pg.features.major
        with pg_cluster.connect() as work, pg_cluster.connect() as look:
            pid = work.info.backend_pid
            new_table(work, "stride_io", major)
            frame = sampler.sample(0, 0.0)  # the first tick reads: the processes are not known yet
            assert server._prev_raw["backends"] and frame.values[M.SESSIONS_ACTIVE] is not None
            before, after, pg_before, pg_after = measured_insert(work, look, "stride_io", major)
            strides, span, tick = [], 0.0, 1
            while len(strides) < 2:
                k = backends_every(server._processes)
                unread = server._backends_unread
                frame = sampler.sample(tick, float(tick))
                tick += 1
                span += frame.dt
                read = server._prev_raw["backends"] is not None
                assert read == (unread + 1 >= k), (tick, unread, k)
                # read with the processes: the process count, and on 18 the AIO in flight
                assert (frame.values[M.DB_BACKENDS] is not None) == read
                assert (frame.values[M.AIO_IN_FLIGHT] is not None) == (read and major >= 18)
                if not read:
                    assert all(frame.values[m] is None for m in SESSIONS) and frame.waits == []
                    assert frame.backends == [] and server._prev_raw["activity"] is None
                    assert not M.waits_sampled(frame.values)
                    continue
                assert all(isinstance(frame.values[m], int) for m in SESSIONS) and M.waits_sampled(frame.values)
                assert any(b["backend_type"] == "checkpointer" for b in frame.backends)
                strides.append(unread + 1)
                if len(strides) == 1:  # the stride the work fell in
                    b = next(b for b in frame.backends if b["pid"] == pid)
                    written = after["write_bytes"] - before["write_bytes"]
                    assert written > 1_000_000
                    assert round(b["write_bytes_s"] * span) == written
                    assert round(b["read_bytes_s"] * span) == after["read_bytes"] - before["read_bytes"]
                    if major >= 18:
                        assert round(b["pg_write_bytes_s"] * span) == pg_after[1] - pg_before[1]
                        assert round(b["pg_read_bytes_s"] * span) == pg_after[0] - pg_before[0]
            assert min(strides) >= 3  # 4+ processes over a threshold of 1
    finally:
        sampler.close()


def test_an_unsampled_tick_leaves_the_backends_as_they_were():
    """backends_tick on a tick without rows: no backends, no events, the tracker unchanged, so an
    autovacuum worker told at the last read is not told again at the next."""
    tracker = BackendTracker()
    worker = [4242, "autovacuum worker", None, "postgres", "active", None, None, 100.0, None, 50.0,
              None, None, "autovacuum: VACUUM public.t"]
    assert len(worker) == len(ROW)

    def tick(rows, t):
        frame = Frame(tick=int(t), t=t, elapsed=t, dt=1.0)
        raw = {"backends": rows, "server_t": t, "aios": None if rows is None else [["SUBMITTED", "readv", 2]]}
        backends_tick(tracker, raw, 1.0 if rows is not None else None, frame, aios=True)
        return frame

    first = tick([worker], 1000.0)
    assert [e.text for e in first.events] == ["autovacuum: VACUUM public.t"]
    between = tick(None, 1001.0)
    assert first.values[M.AIO_IN_FLIGHT] == 2 and first.aio == [("SUBMITTED", "readv", 2)]
    assert between.backends == [] and between.events == [] and between.aio == []
    assert between.values[M.AIO_IN_FLIGHT] is None  # not read: unknown, not none in flight
    again = tick([worker], 1002.0)
    assert again.events == [] and [b["pid"] for b in again.backends] == [4242]


def test_the_per_process_reads_are_not_run_on_a_tick_that_does_not_read_them(pg_cluster):
    """The tick statement on its generic plan (PLAN_CACHE_MODE), explained as run: with backends
    false nothing whose cost grows with the processes is executed (each subquery is an InitPlan run
    only when its CASE branch is taken): pg_stat_activity's function scans (the rows and, 14+, the
    statement's own query id), the process count's scan of pg_database (numbackends), 18's
    pg_aios; with true they all run."""
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        major = sampler.pg.features.major
        raw, order = sampler.pg._raw
        with pg_cluster.connect() as conn:
            conn.execute(f"SET plan_cache_mode = {PLAN_CACHE_MODE}")
            conn.execute(b"PREPARE tick AS " + raw)
            types = conn.execute("SELECT parameter_types::text[] FROM pg_prepared_statements "
                                 "WHERE name = 'tick'").fetchone()[0]
            params = {"skip_queryids": [], "log_offset": 0, "pgss": 0, "texts": [], "bufcache": False,
                      "recent_s": 3.0, "conf_t": None, "pq": [], "pu": [], "pd": [], "pt": [], "pc": []}

            def scans(backends: bool) -> dict[str, list[str]]:
                values = {**params, "backends": backends}
                args = S.SQL(", ").join(S.SQL("{}::{}").format(S.Literal(values[k]), S.SQL(t))
                                        for k, t in zip(order, types))
                plan = [r[0] for r in conn.execute(
                    S.SQL("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE tick({})").format(args))]
                return {name: [line for line in plan if f"Scan on {name}" in line]
                        for name in ("pg_stat_get_activity", "pg_get_aios", "pg_database")}

            for _ in range(2):
                skipped, read = scans(False), scans(True)
                assert len(skipped["pg_stat_get_activity"]) == (2 if major >= 14 else 1)  # the rows, the query id
                assert len(skipped["pg_get_aios"]) == (major >= 18)
                for name in ("pg_stat_get_activity", "pg_get_aios"):
                    assert all("(never executed)" in line for line in skipped[name]), skipped
                    assert all("never executed" not in line and "rows=" in line for line in read[name]), read
                # pg_database: the sums (every tick), the process count and the rows' join (not this one)
                never = [line for line in skipped["pg_database"] if "never executed" in line]
                assert len(never) == 2 and len(skipped["pg_database"]) > 2, skipped
                assert not any("never executed" in line for line in read["pg_database"]), read
    finally:
        sampler.close()


def test_a_recording_keeps_the_ticks_without_a_wait_sample_unknown(tmp_path):
    """Recorded and read back, a tick without a wait sample still has none (sessions.* missing, no
    waits), and the Waits pane's means over the replayed ticks are those over the live ones."""
    frames = list(synthetic_frames(30, incidents=False))
    for f in frames[1::3] + frames[2::3]:  # pg_stat_activity read every third tick
        f.values.update(dict.fromkeys(SESSIONS))
        f.waits, f.backends = [], []
    assert all(f.waits for f in frames[::3])
    path = tmp_path / "stride.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in frames:
            rec.write(f)
    with Recording(path) as rec:
        back = list(rec.frames())
        xs, by_type = waits_over_time(rec, window(rec, "start"))  # the experiment report's waits chart
    client = [sum(n for bt, wt, _, n in f.waits if bt == "client backend" and wt == "IO") for f in frames[::3]]
    assert xs == pytest.approx([f.t - frames[0].t for f in frames[::3]], abs=2e-3)  # times kept to the ms
    assert by_type["IO"] == client and len(client) == 10 and sum(client) > 0
    assert [M.waits_sampled(f.values) for f in back] == [f.tick % 3 == 0 for f in frames]
    live, replayed = FrameHistory(), FrameHistory()
    live.extend(frames)
    replayed.extend(back)
    t0, t1 = frames[0].t - 5, frames[-1].t + 5
    assert replayed.waits_sampled(t0, t1) == live.waits_sampled(t0, t1) == (10, 30)
    assert replayed.waits_summary(t0, t1) == live.waits_summary(t0, t1) != []
