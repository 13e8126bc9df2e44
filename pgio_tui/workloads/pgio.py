"""The pgio-style workload (Kevin Closson's pgio: SLOB's method on PostgreSQL), re-implemented with psycopg 3.

Setup (pgio_setup.py) builds a seed table in random physical order and copies it into
`pgio1..pgioN` with fillfactor 10, so each row has its own 8 kB block and a key range of WORK_UNIT
visits that many random blocks. A run opens every session first, releases them together and only then starts the
clock (the original counted reads made during a slow launch against a shorter time). Sessions run
the server-side loop in short slices, so statistics publish while the run goes on, row locks last
one slice, and a stop (statements cancelled) takes effect at once.

RIOPS and CACHE_HITS/s are the pg_stat_database deltas of the database over the true run time,
as pgio defines them; per tick, the slices report the blocks their own statements read and hit
and the rows they fetched (the backend's pending per-table counters), and each statement's latency.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict
from typing import Any

import psycopg
from psycopg import errors

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.sources.postgres import one_row, scalar
from pgio_tui.workload_facts import PGIO_RUN_STARTED
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.latency import Histogram, buckets_of, frame_values, summarize
from pgio_tui.workloads.pgio_config import BLOCK, PgioConfig
from pgio_tui.workloads.pgio_report import SessionTotals, console_report, read_disks, run_summary
from pgio_tui.workloads.pgio_setup import PgioTables, first_line
from pgio_tui.workloads.pgio_sql import DB_STATS, DROP_OLD, FUNCTION

APP_PREFIX = "pgio_"  # application_name of the sessions: pgio_<table>_<n>


class PgioWorkload(PgioTables):
    kind = "pgio"

    def __init__(self, conninfo: str, config: PgioConfig, devices: list[str] | None = None):
        config.check()
        self.conninfo = conninfo
        self.config = config
        self.devices = devices or []  # block devices under PGDATA, for physical read IOPS (local only)
        c = config
        argv = ["pgio", f"--schemas={c.schemas}", f"--scale={c.scale}", f"--sessions={c.sessions}",
                f"--run-time={c.run_time:g}", f"--update-pct={c.update_pct}", f"--work-unit={c.work_unit}",
                f"--update-work-unit={c.update_work_unit}", "--setup" if c.setup else "--no-setup"]
        super().__init__(argv, {**asdict(c), "scale_blocks": c.scale})
        self._lock = threading.Lock()
        self._lat_pending: list[float] = []
        self._reads_pending = 0
        self._hits_pending = 0
        self._tuples_pending = 0
        self._hist = Histogram()
        self._conns: list[psycopg.Connection] = []  # whatever may be running a statement now
        self._conns_lock = threading.Lock()
        self.sessions: list[SessionTotals] = []
        self.run_s: float | None = None
        self._run_started = False
        self.run_start_t: float | None = None
        self.run_end_t: float | None = None
        self._report: list[str] = []

    # -- connections --------------------------------------------------------------------------

    def _connect(self, app: str) -> psycopg.Connection:
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True, application_name=app, connect_timeout=10)
        except psycopg.Error as exc:
            raise WorkloadError(f"cannot connect: {first_line(exc)}") from None
        with self._conns_lock:
            self._conns.append(conn)
        return conn

    def _release(self, conn: psycopg.Connection) -> None:
        with self._conns_lock:
            if conn in self._conns:
                self._conns.remove(conn)
        conn.close()

    def _request_stop(self) -> None:
        """Cancel whatever is running: a slice, a load, an index build."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.cancel_safe(timeout=5)
            except Exception:  # noqa: BLE001 - a closed or broken connection has nothing to cancel
                pass

    # -- main -----------------------------------------------------------------------------------

    def _run(self) -> None:
        c = self.config
        admin = self._connect("pgio_admin")
        try:
            self.dbname = scalar(admin, "SELECT current_database()")
            if c.setup:
                self.phase = "setup"
                self._setup(admin)
            if self.stop_requested:
                self.exit_code = 130
                return
            self._check_tables(admin)
            try:
                admin.execute(DROP_OLD)
                admin.execute(FUNCTION)
            except psycopg.Error as exc:
                raise WorkloadError(f"cannot create the pgio function: {first_line(exc)}") from None
            self._run_sessions(admin)
        except psycopg.Error as exc:
            if isinstance(exc, errors.QueryCanceled) and self.stop_requested:
                self.emit("note", "stopped during setup: the pgio tables are incomplete; run --setup again")
                self.exit_code = 130
                return
            raise WorkloadError(first_line(exc)) from None
        finally:
            self._release(admin)

    # -- run ------------------------------------------------------------------------------------

    def _run_sessions(self, admin: psycopg.Connection) -> None:
        c = self.config
        shared_buffers = scalar(admin, "SHOW shared_buffers")
        tables = self._tables()
        self.emit("note", f"Date: {time.strftime('%a %b %d %H:%M:%S %Z %Y')}")
        self.emit("note", f"Database: {self.dbname}. Shared buffers: {shared_buffers}.")
        self.emit("note", f"Testing {c.schemas} schemas with {c.sessions} thread(s) accessing "
                          f"{c.scale * BLOCK / 2**20:.0f}M ({c.scale} blocks) of each schema.")
        rels = {name: scalar(admin, "SELECT array[%s::regclass::oid, %s::regclass::oid]",
                             [name, f"{name}_idx"]) for name in tables}
        n = c.schemas * c.sessions
        self.sessions = [SessionTotals(table=tables[i // c.sessions]) for i in range(n)]
        ready = threading.Barrier(n + 1, timeout=60)
        go = threading.Event()
        t0_box: list[float] = []
        workers = [threading.Thread(target=self._session, args=(i, rels, ready, go, t0_box), daemon=True,
                                    name=f"pgio-session-{i}") for i in range(n)]
        self.emit("note", f"Launching sessions. {c.schemas} schema(s) will be accessed by {c.sessions} "
                          f"thread(s) each.")
        for w in workers:
            w.start()
        try:
            ready.wait()  # every session connected
        except threading.BrokenBarrierError:
            go.set()
            for w in workers:
                w.join()
            err = next((s.error for s in self.sessions if s.error), "a session could not start")
            raise WorkloadError(f"cannot start {n} sessions: {err}") from None
        disk_a = read_disks(self.devices)
        before = self._db_stats(admin)
        self.phase = "run"
        t0 = time.monotonic()
        t0_box.append(t0)
        self.run_start_t = time.time()  # the run itself, setup excluded: a comparison's window
        self._run_started = True
        go.set()
        self.event("note", f"{PGIO_RUN_STARTED}{n} session(s)")
        for w in workers:
            w.join()
        t1 = time.monotonic()
        self.run_end_t = time.time()
        self.run_s = t1 - t0
        pids = [s.pid for s in self.sessions if s.pid]
        # Sessions are closed by now: a backend publishes its last statistics as it exits.
        self._wait_backends_gone(admin, pids)
        after = self._stable_db_stats(admin)
        disk_b = read_disks(self.devices)
        self.summary = run_summary(self, before, after, disk_a, disk_b, shared_buffers)
        self._report = console_report(self, before, after)
        for line in self._report:
            self.emit("note", line)
        failed = [s.error for s in self.sessions if s.error]
        if failed and not self.stop_requested:
            raise WorkloadError(f"{len(failed)} session(s) failed: {failed[0]}")

    def _session(self, i: int, rels: dict, ready: threading.Barrier, go: threading.Event, t0_box: list) -> None:
        c = self.config
        me = self.sessions[i]
        try:
            conn = self._connect(f"{APP_PREFIX}{me.table}_{i % c.sessions + 1}")
        except WorkloadError as exc:
            me.error = str(exc)
            ready.abort()
            return
        try:
            me.pid = conn.info.backend_pid
            try:
                ready.wait()
            except threading.BrokenBarrierError:
                return
            go.wait()
            if not t0_box:
                return
            t0 = t0_box[0]
            query = ("SELECT selects, updates, select_us, update_us, blks_fetched, blks_hit, tuples "
                     "FROM pgio_tui_slice(%s::regclass, %s::oid[], %s, %s, %s, %s, %s)")
            while not self.stop_requested:
                left = c.run_time - (time.monotonic() - t0)
                if left <= 0.001:
                    break
                try:
                    row = one_row(conn.execute(query, [me.table, rels[me.table], c.update_pct, min(c.slice_s, left),
                                                       c.scale, c.work_unit, c.update_work_unit]))
                except errors.QueryCanceled:
                    me.cancelled += 1
                    if self.stop_requested:
                        break
                    continue
                except errors.DeadlockDetected:
                    me.deadlocks += 1  # the slice's counters are lost, its reads are not
                    continue
                self._add_slice(me, row)
        except psycopg.Error as exc:
            if not self.stop_requested:
                me.error = first_line(exc)
                self.stop()
        finally:
            self._release(conn)

    def _add_slice(self, me: SessionTotals, row: tuple) -> None:
        selects, updates, sel_us, upd_us, fetched, hit, tuples = row
        sel_ms = [u / 1000.0 for u in sel_us or ()]
        upd_ms = [u / 1000.0 for u in upd_us or ()]
        reads = (fetched or 0) - (hit or 0)
        me.slices += 1
        me.selects += selects
        me.updates += updates
        me.select_max_ms = max([me.select_max_ms, *sel_ms])
        me.update_max_ms = max([me.update_max_ms, *upd_ms])
        me.blks_read += reads
        me.blks_hit += hit or 0
        me.tuples += tuples or 0
        with self._lock:
            self._lat_pending += sel_ms + upd_ms
            self._reads_pending += reads
            self._hits_pending += hit or 0
            self._tuples_pending += tuples or 0
            for ms in sel_ms + upd_ms:
                self._hist.add(ms)

    def _tick_values(self, frame: Frame, finished: bool) -> None:
        if not self._run_started:
            return
        with self._lock:
            lat, reads, hits, tuples = self._lat_pending, self._reads_pending, self._hits_pending, self._tuples_pending
            self._lat_pending, self._reads_pending, self._hits_pending, self._tuples_pending = [], 0, 0, 0
        frame.values.update(frame_values(summarize(lat), frame.dt))
        frame.latency_buckets = buckets_of(lat)
        frame.values[M.PGIO_READS_S] = reads / frame.dt if frame.dt else None
        frame.values[M.PGIO_HITS_S] = hits / frame.dt if frame.dt else None
        frame.values[M.PGIO_TUPLES_S] = tuples / frame.dt if frame.dt else None

    # -- measuring ------------------------------------------------------------------------------

    def _db_stats(self, admin: psycopg.Connection) -> dict[str, Any]:
        cols = ", ".join(DB_STATS)
        row = one_row(admin.execute(f"SELECT {cols} FROM pg_stat_database WHERE datname = current_database()"))
        return dict(zip(DB_STATS, row))

    def _stable_db_stats(self, admin: psycopg.Connection, timeout: float = 5.0) -> dict[str, Any]:
        """Read until two reads 0.3 s apart agree: exited backends' last counters have landed
        (13/14 send them to the collector asynchronously, 15+ write them at exit)."""
        deadline = time.monotonic() + timeout
        cur = self._db_stats(admin)
        while time.monotonic() < deadline:
            time.sleep(0.3)
            nxt = self._db_stats(admin)
            if (nxt["blks_read"], nxt["blks_hit"]) == (cur["blks_read"], cur["blks_hit"]):
                return nxt
            cur = nxt
        return cur

    @staticmethod
    def _wait_backends_gone(admin: psycopg.Connection, pids: list[int], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while pids and time.monotonic() < deadline:
            left = scalar(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])
            if not left:
                return
            time.sleep(0.05)

    def report_lines(self) -> list[str]:
        return list(self._report)

    def latency_stats(self) -> dict[str, Any]:
        """The run's statement latencies so far (count, mean, percentiles, max), as a summary keeps them."""
        with self._lock:
            return self._hist.stats().as_dict()

    def partial_summary(self) -> dict[str, Any] | None:
        if not self._run_started:
            return None
        latency = self.latency_stats()
        return {"partial": True, "note": "the recording ended while pgio was running: figures so far "
                                         "(RIOPS needs the run's end)", "run_start_t": self.run_start_t,
                "selects": sum(s.selects for s in self.sessions), "updates": sum(s.updates for s in self.sessions),
                "pgio_reads": sum(s.blks_read for s in self.sessions),
                "pgio_tuples": sum(s.tuples for s in self.sessions), "latency": latency,
                "deadlocks": sum(s.deadlocks for s in self.sessions), "sessions": [asdict(s) for s in self.sessions]}

    def outcome(self) -> str:
        s = self.summary
        if self.error:
            return f"failed: {self.error}"
        if s:
            return f"RIOPS {s['riops'] or 0:.0f}, CACHE_HITS/s {s['cache_hits_s'] or 0:.0f} over {s['run_s']:.1f} s"
        return super().outcome()
