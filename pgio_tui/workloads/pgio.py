"""The pgio-style workload (Kevin Closson's pgio: SLOB's method on PostgreSQL), re-implemented with psycopg 3.

Setup builds a seed table in random physical order and copies it into `pgio1..pgioN` with
fillfactor 10, so each row has its own 8 kB block and a key range of WORK_UNIT visits that many
random blocks. A run opens every session first, releases them together and only then starts the
clock (the original counted reads made during a slow launch against a shorter time). Sessions run
the server-side loop in short slices, so statistics publish while the run goes on, row locks last
one slice, and a stop (statements cancelled) takes effect at once.

RIOPS and CACHE_HITS/s are the pg_stat_database deltas of the database over the true run time,
as pgio defines them; per tick, the slices report the blocks their own statements read and hit
(the backend's pending per-table counters) and each statement's latency.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import psycopg
from psycopg import errors, sql

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.workloads.launch import PGIO_DEFAULTS
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.latency import Histogram, buckets_of, frame_values, summarize

BLOCK = 8192
MIN_BLOCKS = 1024  # pgio refuses smaller tables (8 MB)
SLICE_S = 0.25  # seconds per server-side call: the longest a stop or a statistics update waits
APP_PREFIX = "pgio_"  # application_name of the sessions: pgio_<table>_<n>

# The session loop of pgio.md §3.4, one slice long. Returns counts, each statement's time in µs and
# the blocks this call fetched and hit in the table and its index.
FUNCTION = r"""
CREATE OR REPLACE FUNCTION pgio_tui_slice(
    tab regclass, rels oid[], upd_pct int, secs double precision, scale bigint, wu int, uwu int,
    OUT selects int, OUT updates int, OUT select_us int[], OUT update_us int[],
    OUT blks_fetched bigint, OUT blks_hit bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
    stop_at timestamptz := clock_timestamp() + secs * interval '1 second';
    sel text := format('SELECT sum(scratch) FROM %s WHERE mykey BETWEEN $1 AND $2', tab);
    upd text := format('UPDATE %s SET scratch = scratch + 1 WHERE mykey BETWEEN $1 AND $2', tab);
    k bigint;
    t0 timestamptz;
    total bigint;
    is_update boolean;
    win_n int := 0;
    win_upd int := 0;
    win_sel int := 0;
    f0 bigint;
    h0 bigint;
BEGIN
    selects := 0; updates := 0; select_us := '{}'; update_us := '{}';
    SELECT sum(pg_stat_get_xact_blocks_fetched(r)), sum(pg_stat_get_xact_blocks_hit(r)) INTO f0, h0
      FROM unnest(rels) AS r;
    WHILE clock_timestamp() < stop_at LOOP
        k := trunc(random() * (scale - wu - 1) + 1);  -- 1 .. scale - wu - 1, as pgio
        is_update := CASE upd_pct WHEN 0 THEN false WHEN 100 THEN true
                     ELSE (k % 2 = 0 AND win_upd < upd_pct) OR win_sel >= 100 - upd_pct END;
        t0 := clock_timestamp();
        IF is_update THEN
            EXECUTE upd USING k, k + uwu;
            update_us := update_us || (extract(epoch FROM clock_timestamp() - t0) * 1000000)::int;
            updates := updates + 1;
            win_upd := win_upd + 1;
        ELSE
            EXECUTE sel INTO total USING k, k + wu;
            select_us := select_us || (extract(epoch FROM clock_timestamp() - t0) * 1000000)::int;
            selects := selects + 1;
            win_sel := win_sel + 1;
        END IF;
        win_n := win_n + 1;
        IF win_n = 100 THEN  -- a window of 100 statements holds exactly upd_pct updates
            win_n := 0; win_upd := 0; win_sel := 0;
        END IF;
    END LOOP;
    SELECT sum(pg_stat_get_xact_blocks_fetched(r)) - f0, sum(pg_stat_get_xact_blocks_hit(r)) - h0
      INTO blks_fetched, blks_hit FROM unnest(rels) AS r;
END
$fn$
"""

DB_STATS = ("blks_read", "blks_hit", "tup_returned", "tup_fetched", "tup_updated", "deadlocks", "blk_read_time")


def parse_scale(text: str | int) -> int:
    """pgio's SCALE: a block count, or a size with M, G or T (MiB, GiB, TiB); at least 1024 blocks."""
    m = re.fullmatch(r"\s*(\d+)\s*([MGTmgt]?)\s*", str(text))
    if not m:
        raise WorkloadError(f"--scale {text!r}: give blocks (e.g. 8192) or a size like 64M, 1G")
    n, unit = int(m.group(1)), m.group(2).upper()
    blocks = n * {"": 1, "M": 2**20 // BLOCK, "G": 2**30 // BLOCK, "T": 2**40 // BLOCK}[unit]
    if blocks < MIN_BLOCKS:
        raise WorkloadError(f"--scale {text} is {blocks} blocks: pgio needs at least {MIN_BLOCKS} (8M)")
    return blocks


@dataclass(slots=True)
class PgioConfig:
    """pgio.conf, by its original meanings (pgio.md §2)."""

    schemas: int = PGIO_DEFAULTS["schemas"]  # NUM_SCHEMAS: tables pgio1..pgioN
    scale: int = parse_scale(PGIO_DEFAULTS["scale"])  # SCALE in blocks per table
    sessions: int = PGIO_DEFAULTS["sessions"]  # NUM_THREADS: sessions per table
    run_time: float = float(PGIO_DEFAULTS["run_time"])  # RUN_TIME, seconds
    update_pct: int = PGIO_DEFAULTS["update_pct"]  # UPDATE_PCT: 0, 1-50 or 100
    work_unit: int = PGIO_DEFAULTS["work_unit"]  # WORK_UNIT
    update_work_unit: int = PGIO_DEFAULTS["update_work_unit"]  # UPDATE_WORK_UNIT
    setup: bool = PGIO_DEFAULTS["setup"]  # build the tables first
    slice_s: float = SLICE_S

    def check(self) -> None:
        if self.schemas < 1 or self.sessions < 1:
            raise WorkloadError("--schemas and --sessions must be 1 or more")
        if not (self.update_pct in (0, 100) or 1 <= self.update_pct <= 50):
            raise WorkloadError(f"--update-pct {self.update_pct}: pgio allows 0, 1-50 or 100")
        if not 1 <= self.work_unit < self.scale - 1 or not 1 <= self.update_work_unit < self.scale - 1:
            raise WorkloadError("--work-unit and --update-work-unit must be at least 1 and below the scale")
        if self.run_time <= 0:
            raise WorkloadError("--run-time must be greater than 0")


@dataclass(slots=True)
class SessionTotals:
    """One session's run, as pgio's per-session detail (its pgio_return row) plus ours."""

    table: str
    pid: int | None = None
    slices: int = 0
    selects: int = 0
    updates: int = 0
    select_max_ms: float = 0.0
    update_max_ms: float = 0.0
    blks_read: int = 0
    blks_hit: int = 0
    deadlocks: int = 0
    cancelled: int = 0
    error: str | None = None


class PgioWorkload(Workload):
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
            raise WorkloadError(f"cannot connect: {_first_line(exc)}") from None
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
            self.dbname = admin.execute("SELECT current_database()").fetchone()[0]
            if c.setup:
                self.phase = "setup"
                self._setup(admin)
            if self.stop_requested:
                self.exit_code = 130
                return
            self._check_tables(admin)
            try:
                admin.execute(FUNCTION)
            except psycopg.Error as exc:
                raise WorkloadError(f"cannot create the pgio function: {_first_line(exc)}") from None
            self._run_sessions(admin)
        except psycopg.Error as exc:
            if isinstance(exc, errors.QueryCanceled) and self.stop_requested:
                self.emit("note", "stopped during setup: the pgio tables are incomplete; run --setup again")
                self.exit_code = 130
                return
            raise WorkloadError(_first_line(exc)) from None
        finally:
            self._release(admin)

    # -- setup ----------------------------------------------------------------------------------

    def _tables(self) -> list[str]:
        return [f"pgio{i}" for i in range(1, self.config.schemas + 1)]

    def _setup(self, admin: psycopg.Connection) -> None:
        c = self.config
        t0 = time.monotonic()
        self.progress = 0.0
        self.emit("note", f"Job info: Loading {c.scale} blocks ({c.scale * BLOCK / 2**20:.0f} MB) into "
                          f"{c.schemas} table(s) of database {self.dbname}")
        have = admin.execute("SELECT to_regclass('pgio_base') IS NOT NULL").fetchone()[0]
        rows = admin.execute("SELECT count(*) FROM pgio_base").fetchone()[0] if have else None
        if rows != c.scale:
            admin.execute("DROP TABLE IF EXISTS pgio_base")
            admin.execute("CREATE TABLE pgio_base (mykey bigint, scratch bigint, filler char(1024))")
            admin.execute("INSERT INTO pgio_base SELECT g, trunc(random() * 1000000000), repeat('X', 1024) "
                          "FROM generate_series(1, %s) AS g ORDER BY 2", [c.scale])  # random physical order
            self.emit("note", f"Base table loading time: {time.monotonic() - t0:.1f} seconds.")
        else:
            self.emit("note", "Base table pgio_base reused (right row count).")
        old = [r[0] for r in admin.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace "
            "AND c.relkind IN ('r', 'p') AND c.relname ~ '^pgio[0-9]+$'").fetchall()]
        for name in old:
            admin.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
        tables = self._tables()
        workers = max(1, min(c.sessions, len(tables)))
        self.emit("note", f"Batching info: loading {len(tables)} table(s) with {workers} loader(s)")
        todo = list(tables)
        todo_lock = threading.Lock()
        errors_seen: list[str] = []

        def loader() -> None:
            try:
                conn = self._connect("pgio_setup")
            except WorkloadError as exc:
                errors_seen.append(str(exc))
                return
            try:
                while not self.stop_requested:
                    with todo_lock:
                        if not todo:
                            return
                        name = todo.pop(0)
                    self._load_table(conn, name)
            except psycopg.Error as exc:
                if not self.stop_requested:
                    errors_seen.append(_first_line(exc))
            finally:
                self._release(conn)

        threads = [threading.Thread(target=loader, daemon=True) for _ in range(workers)]
        for t in threads:
            t.start()
        expected = len(tables) * c.scale * BLOCK
        last_note = time.monotonic()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(0.5)
            if self.stop_requested:
                continue
            try:
                size = admin.execute("SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c "
                                     "WHERE c.relname = ANY(%s) AND c.relkind = 'r'", [tables]).fetchone()[0]
            except psycopg.Error:
                continue
            self.progress = min(0.99, size / expected)
            if time.monotonic() - last_note >= 2:
                last_note = time.monotonic()
                self.emit("note", f"setup: {self.progress:.0%} loaded ({size / 2**20:.0f} of "
                                  f"{expected / 2**20:.0f} MB), {last_note - t0:.1f} s")
        if self.stop_requested:
            raise errors.QueryCanceled("setup cancelled")
        if errors_seen:
            raise WorkloadError(f"setup failed: {errors_seen[0]}")
        for name in tables:
            heap, index = admin.execute("SELECT pg_relation_size(%s::regclass), pg_relation_size(%s::regclass)",
                                        [name, f"{name}_idx"]).fetchone()
            self.emit("note", f"{name}: table {heap / 2**20:.1f} MB ({heap // BLOCK} blocks), "
                              f"index {index / 2**10:.0f} kB")
        self.progress = 1.0
        self.emit("note", f"Group data loading phase complete. Elapsed: {time.monotonic() - t0:.1f} seconds.")

    def _load_table(self, conn: psycopg.Connection, name: str) -> None:
        """One table: fillfactor 10 so each ~1 kB row gets its own block; index after the load."""
        t, idx = sql.Identifier(name), sql.Identifier(f"{name}_idx")
        conn.execute(sql.SQL("CREATE TABLE {} (mykey bigint, scratch bigint, filler char(1024)) "
                             "WITH (fillfactor = 10)").format(t))
        conn.execute(sql.SQL("INSERT INTO {} SELECT mykey, scratch, filler FROM pgio_base").format(t))
        conn.execute(sql.SQL("CREATE INDEX {} ON {} (mykey)").format(idx, t))
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(t))  # hint bits set now, not by the first reads

    def _check_tables(self, admin: psycopg.Connection) -> None:
        c = self.config
        for name in self._tables():
            row = admin.execute("SELECT to_regclass(%s), to_regclass(%s)", [name, f"{name}_idx"]).fetchone()
            if row[0] is None or row[1] is None:
                raise WorkloadError(f"no pgio table {name} (or its index) in database {self.dbname}: run with "
                                    f"--setup first (pgio-tui bench pgio --setup --scale {c.scale} "
                                    f"--schemas {c.schemas})")
            blocks = admin.execute("SELECT pg_relation_size(%s::regclass) / %s", [name, BLOCK]).fetchone()[0]
            if abs(blocks - c.scale) > max(8, c.scale // 100):
                raise WorkloadError(f"{name} has {blocks} blocks but --scale is {c.scale}: give the scale used "
                                    f"at setup, or run with --setup")

    # -- run ------------------------------------------------------------------------------------

    def _run_sessions(self, admin: psycopg.Connection) -> None:
        c = self.config
        shared_buffers = admin.execute("SHOW shared_buffers").fetchone()[0]
        tables = self._tables()
        self.emit("note", f"Date: {time.strftime('%a %b %d %H:%M:%S %Z %Y')}")
        self.emit("note", f"Database: {self.dbname}. Shared buffers: {shared_buffers}.")
        self.emit("note", f"Testing {c.schemas} schemas with {c.sessions} thread(s) accessing "
                          f"{c.scale * BLOCK / 2**20:.0f}M ({c.scale} blocks) of each schema.")
        rels = {name: admin.execute("SELECT array[%s::regclass::oid, %s::regclass::oid]",
                                    [name, f"{name}_idx"]).fetchone()[0] for name in tables}
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
        disk_a = _read_disks(self.devices)
        before = self._db_stats(admin)
        self.phase = "run"
        t0 = time.monotonic()
        t0_box.append(t0)
        self.run_start_t = time.time()  # the run itself, setup excluded: a comparison's window
        self._run_started = True
        go.set()
        self.event("note", f"pgio run started: {n} session(s)")
        for w in workers:
            w.join()
        t1 = time.monotonic()
        self.run_end_t = time.time()
        self.run_s = t1 - t0
        pids = [s.pid for s in self.sessions if s.pid]
        # Sessions are closed by now: a backend publishes its last statistics as it exits.
        self._wait_backends_gone(admin, pids)
        after = self._stable_db_stats(admin)
        disk_b = _read_disks(self.devices)
        self.summary = self._make_summary(before, after, disk_a, disk_b, shared_buffers)
        self._report = self._report_lines(before, after)
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
            query = ("SELECT selects, updates, select_us, update_us, blks_fetched, blks_hit "
                     "FROM pgio_tui_slice(%s::regclass, %s::oid[], %s, %s, %s, %s, %s)")
            while not self.stop_requested:
                left = c.run_time - (time.monotonic() - t0)
                if left <= 0.001:
                    break
                try:
                    row = conn.execute(query, [me.table, rels[me.table], c.update_pct, min(c.slice_s, left),
                                               c.scale, c.work_unit, c.update_work_unit]).fetchone()
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
                me.error = _first_line(exc)
                self.stop()
        finally:
            self._release(conn)

    def _add_slice(self, me: SessionTotals, row: tuple) -> None:
        selects, updates, sel_us, upd_us, fetched, hit = row
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
        with self._lock:
            self._lat_pending += sel_ms + upd_ms
            self._reads_pending += reads
            self._hits_pending += hit or 0
            for ms in sel_ms + upd_ms:
                self._hist.add(ms)

    def _tick_values(self, frame: Frame, finished: bool) -> None:
        if not self._run_started:
            return
        with self._lock:
            lat, reads, hits = self._lat_pending, self._reads_pending, self._hits_pending
            self._lat_pending, self._reads_pending, self._hits_pending = [], 0, 0
        frame.values.update(frame_values(summarize(lat), frame.dt))
        frame.latency_buckets = buckets_of(lat)
        frame.values[M.PGIO_READS_S] = reads / frame.dt if frame.dt else None
        frame.values[M.PGIO_HITS_S] = hits / frame.dt if frame.dt else None

    # -- measuring ------------------------------------------------------------------------------

    def _db_stats(self, admin: psycopg.Connection) -> dict[str, Any]:
        cols = ", ".join(DB_STATS)
        row = admin.execute(f"SELECT {cols} FROM pg_stat_database WHERE datname = current_database()").fetchone()
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
            left = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]).fetchone()[0]
            if not left:
                return
            time.sleep(0.05)

    def _make_summary(self, before, after, disk_a, disk_b, shared_buffers) -> dict[str, Any]:
        c = self.config
        run_s = self.run_s or 0.0
        d = {k: (after[k] - before[k]) if after[k] is not None and before[k] is not None else None for k in DB_STATS}
        per_s = (lambda x: x / run_s if run_s and x is not None else None)
        selects = sum(s.selects for s in self.sessions)
        updates = sum(s.updates for s in self.sessions)
        reads = sum(s.blks_read for s in self.sessions)
        summary: dict[str, Any] = {
            "dbname": self.dbname, "schemas": c.schemas, "sessions_per_table": c.sessions,
            "scale_blocks": c.scale, "shared_buffers": shared_buffers,
            "run_s": round(run_s, 3), "run_s_whole": int(run_s),
            "run_start_t": self.run_start_t, "run_end_t": self.run_end_t,
            "riops": per_s(d["blks_read"]), "cache_hits_s": per_s(d["blks_hit"]),
            "blks_read": d["blks_read"], "blks_hit": d["blks_hit"],
            "tup_returned": d["tup_returned"], "tup_fetched": d["tup_fetched"], "tup_updated": d["tup_updated"],
            "deadlocks": sum(s.deadlocks for s in self.sessions), "db_deadlocks": d["deadlocks"],
            "ms_per_read": (d["blk_read_time"] / d["blks_read"]) if d["blk_read_time"] and d["blks_read"] else None,
            "selects": selects, "updates": updates, "statements_s": per_s(selects + updates),
            "select_blocks_nominal": selects * c.work_unit, "update_blocks_nominal": updates * c.update_work_unit,
            "pgio_reads": reads, "pgio_reads_s": per_s(reads),
            "pgio_hits": sum(s.blks_hit for s in self.sessions),
            "stopped": self.stop_requested, "before": before, "after": after,
            "latency": self._hist.stats().as_dict(),
            "sessions": [asdict(s) for s in self.sessions],
        }
        if disk_a and disk_b:
            ios = {dev: disk_b[dev] - disk_a[dev] for dev in disk_a if dev in disk_b}
            summary["physical_reads"] = ios
            summary["physical_read_iops"] = {dev: per_s(n) for dev, n in ios.items()}
        return summary

    def _report_lines(self, before, after) -> list[str]:
        """pgio's console report: BEFORE/AFTER rows and the classic result line (true run time)."""
        s = self.summary
        cols = ("blks_hit", "blks_read", "tup_returned", "tup_fetched", "tup_updated")
        lines = ["pg_stat_database stats:", "          datname | " + " | ".join(cols)]
        for label, row in (("BEFORE", before), ("AFTER", after)):
            lines.append(f"{label}:  {self.dbname} | " + " | ".join(str(row[k]) for k in cols))
        lines.append(f"DBNAME:  {self.dbname}. {self.config.schemas} schemas, {self.config.sessions} "
                     f"threads(each). Run time: {s['run_s_whole']} seconds. RIOPS >{int(s['riops'] or 0)}< "
                     f"CACHE_HITS/s >{int(s['cache_hits_s'] or 0)}<")
        lines.append(f"true run time {s['run_s']:.3f} s; statements/s {s['statements_s'] or 0:.1f}; "
                     f"reads by pgio statements/s {s['pgio_reads_s'] or 0:.0f}; deadlocks {s['deadlocks']}")
        for dev, iops in (s.get("physical_read_iops") or {}).items():
            lines.append(f"physical read IOPS ({dev}, /proc/diskstats): {iops:.0f}")
        lines.append("session detail: table pid slices selects updates select_max_ms update_max_ms "
                     "blks_read blks_hit deadlocks")
        for x in self.sessions:
            lines.append(f"  {x.table} {x.pid} {x.slices} {x.selects} {x.updates} {x.select_max_ms:.3f} "
                         f"{x.update_max_ms:.3f} {x.blks_read} {x.blks_hit} {x.deadlocks}")
        return lines

    def report_lines(self) -> list[str]:
        return list(self._report)

    def partial_summary(self) -> dict[str, Any] | None:
        if not self._run_started:
            return None
        with self._lock:
            latency = self._hist.stats().as_dict()
        return {"partial": True, "note": "the recording ended while pgio was running: figures so far "
                                         "(RIOPS needs the run's end)", "run_start_t": self.run_start_t,
                "selects": sum(s.selects for s in self.sessions), "updates": sum(s.updates for s in self.sessions),
                "pgio_reads": sum(s.blks_read for s in self.sessions), "latency": latency,
                "deadlocks": sum(s.deadlocks for s in self.sessions), "sessions": [asdict(s) for s in self.sessions]}

    def outcome(self) -> str:
        s = self.summary
        if self.error:
            return f"failed: {self.error}"
        if s:
            return f"RIOPS {s['riops'] or 0:.0f}, CACHE_HITS/s {s['cache_hits_s'] or 0:.0f} over {s['run_s']:.1f} s"
        return super().outcome()


def _read_disks(devices: list[str]) -> dict[str, int]:
    """Reads completed per device, from the local /proc/diskstats."""
    if not devices:
        return {}
    from pgio_tui.sources.disks import parse_diskstats
    try:
        with open("/proc/diskstats") as f:
            stats = parse_diskstats(f.read())
    except OSError:
        return {}
    return {d: stats[d].rd_ios for d in devices if d in stats}


def _first_line(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    msg = (getattr(diag, "message_primary", None) or str(exc) or type(exc).__name__).strip()
    return msg.splitlines()[0]
