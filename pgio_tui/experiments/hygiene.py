"""Run hygiene: what makes a single A/B run lie, done before each run and watched during it.

Before: a CHECKPOINT (no dirty buffers carried over from the last run), pg_stat_statements reset,
then a wait (with a timeout) for the kernel's Dirty to fall under its background threshold, so a run
does not start by paying for the last one's writeback. During: a `Watch` notes autovacuum workers
(their query text says "to prevent wraparound" for anti-wraparound ones), the per-table
autovacuum/autoanalyze counters and relfrozenxid ages (a table vacuumed after its age passed
autovacuum_freeze_max_age in the window was an anti-wraparound vacuum, even one too short for the
poll to see), pg_wal's segment count and the checkpoints started. Afterwards the run gets flags
(a run with no checkpoint at all among them: its checkpoint figures are empty, and it says why):
stored in experiment.json with the run, so every reader shows them.

Dirty and its thresholds are this machine's (/proc/meminfo, /proc/vmstat): the server's when it is
local, which an experiment that changes settings and restarts servers assumes anyway.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from pgio_tui import metrics as M
from pgio_tui.experiments.plan import DIRTY_WAIT_S
from pgio_tui.secrets import scrub_statement
from pgio_tui.sources import pg_counters
from pgio_tui.sources.backends import AUTOVACUUM_QUERY
from pgio_tui.sources.kernel import KernelSource
from pgio_tui.sources.pgfeatures import own, ran, run_own  # the statement figures leave the watch out
from pgio_tui.sources.postgres import one_row, scalar
from pgio_tui.sources.procfs import LOCAL, ProcReader

POLL_S = 0.5  # how often the watch looks at pg_stat_activity for autovacuum workers
EARLY = 0.9  # a run shorter than this share of its asked length "ended early"
_SEGMENT = r"^[0-9A-F]{24}$"  # a WAL segment's file name (not .history, .partial, archive_status)

Say = Any  # Callable[[str], object]


def flag(kind: str, text: str, **data: Any) -> dict[str, Any]:
    """One flag on a run: a kind a program can test, a line a person reads, and the facts."""
    return {"kind": kind, "text": text, **data}


# --- before a run -------------------------------------------------------------------------------

def dirty_now(reader: ProcReader = LOCAL) -> tuple[float | None, float | None]:
    """(Dirty kB, background threshold kB) of this machine now."""
    values = KernelSource(reader).sample(None)
    return values.get(M.MEM_DIRTY_KB), values.get(M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB)


def prepare(conninfo: str, *, dirty_wait_s: float = DIRTY_WAIT_S, say: Say = lambda text: None,
            reader: ProcReader = LOCAL) -> dict[str, Any]:
    """CHECKPOINT, pg_stat_statements reset, then wait for Dirty under the background threshold.
    Returns what was done and found (kept with the run)."""
    out: dict[str, Any] = {"checkpoint": False, "pgss_reset": False}
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        out["checkpoint"] = True
        if conn.execute("select 1 from pg_extension where extname = 'pg_stat_statements'").fetchone():
            try:
                conn.execute("select pg_stat_statements_reset()")
                out["pgss_reset"] = True
            except psycopg.Error:
                pass  # created in the database but not in shared_preload_libraries
    t0 = time.monotonic()
    dirty, threshold = dirty_now(reader)
    said = False
    while dirty is not None and threshold is not None and dirty > threshold:
        if time.monotonic() - t0 >= dirty_wait_s:
            break
        if not said:
            say(f"waiting up to {dirty_wait_s:g} s for Dirty ({dirty // 1024} MB) to fall under the "
                f"background threshold ({threshold // 1024} MB)")
            said = True
        time.sleep(0.5)
        dirty, threshold = dirty_now(reader)
    out.update(dirty_kb=dirty, dirty_background_threshold_kb=threshold,
               dirty_wait_s=round(time.monotonic() - t0, 1))
    return out


def start_flags(prep: dict[str, Any], dirty_wait_s: float) -> list[dict[str, Any]]:
    dirty, threshold = prep.get("dirty_kb"), prep.get("dirty_background_threshold_kb")
    if dirty is not None and threshold is not None and dirty > threshold:
        return [flag("dirty_at_start", f"started with Dirty {dirty // 1024} MB above the background threshold "
                                       f"{threshold // 1024} MB (waited {prep.get('dirty_wait_s')} s, "
                                       f"the most is {dirty_wait_s:g} s)", dirty_kb=dirty,
                     dirty_background_threshold_kb=threshold)]
    return []


def outcome_flags(state: str, note: str, ran_s: float, asked_s: float | None) -> list[dict[str, Any]]:
    """The workload failed, was stopped, or ran clearly shorter than asked."""
    if state == "failed":
        return [flag("workload_failed", f"workload failed: {note or 'no message'}")]
    if state == "interrupted":
        return [flag("ended_early", f"ended early: {note or 'stopped'}")]
    if asked_s and ran_s < EARLY * asked_s:
        return [flag("ended_early", f"ended early: ran {ran_s:.0f} s of the {asked_s:g} s asked",
                     ran_s=round(ran_s, 1), asked_s=asked_s)]
    return []


# --- during a run -------------------------------------------------------------------------------

def _av_counts(conn: psycopg.Connection) -> dict[str, tuple[int, int]]:
    rows = conn.execute("select schemaname || '.' || relname, coalesce(autovacuum_count, 0), "
                        "coalesce(autoanalyze_count, 0) from pg_stat_all_tables").fetchall()
    return {name: (int(v), int(a)) for name, v, a in rows}


def _ages(conn: psycopg.Connection) -> tuple[dict[str, int], int, int]:
    """(table -> age of its relfrozenxid, the next transaction id, autovacuum_freeze_max_age)."""
    ages: dict[str, int]
    ages = dict(conn.execute("select n.nspname || '.' || c.relname, age(c.relfrozenxid) from pg_class c "
                             "join pg_namespace n on n.oid = c.relnamespace where c.relkind in ('r', 'm', 't')"
                             ).fetchall())
    nxt, limit = one_row(conn.execute("select pg_snapshot_xmax(pg_current_snapshot())::text::bigint, "
                                      "current_setting('autovacuum_freeze_max_age')::bigint"))
    return {k: int(v) for k, v in ages.items()}, int(nxt), int(limit)


SYSTEM_SCHEMAS = ("pg_catalog.", "pg_toast.", "information_schema.")
AV_MIN_BYTES = 8 * 1024 * 1024  # a system table's autovacuum below this size cannot matter to a run


def matters(f: dict[str, Any]) -> bool:
    """Whether a flag can matter to the run's figures: every flag but an autovacuum of a small
    system table (ANALYZE of pg_attribute after CREATE TABLE); anti-wraparound ones always. A
    flag without a size (older folders) counts by its schema alone."""
    if f.get("kind") != "autovacuum" or f.get("wraparound"):
        return True
    table = str(f.get("table") or "")
    size = f.get("bytes")
    return not table.startswith(SYSTEM_SCHEMAS) or (isinstance(size, int) and size >= AV_MIN_BYTES)


def _sizes(conn: psycopg.Connection, tables: list[str]) -> dict[str, int]:
    """table -> its size with indexes and TOAST, in bytes."""
    if not tables:
        return {}
    rows = conn.execute("select n.nspname || '.' || c.relname, pg_total_relation_size(c.oid) from pg_class c "
                        "join pg_namespace n on n.oid = c.relnamespace where n.nspname || '.' || c.relname = any(%s)",
                        [tables]).fetchall()
    return {t: int(b) for t, b in rows if b is not None}


def _wal_files(conn: psycopg.Connection) -> int | None:
    try:
        return scalar(conn, "select count(*) from pg_ls_waldir() where name ~ %s", [_SEGMENT])
    except psycopg.Error:
        return None  # pg_ls_waldir needs superuser or pg_monitor


def _checkpoint_state(conn: psycopg.Connection) -> tuple[float | None, bool | None, dict[str, str]]:
    """Checkpoints started so far (the server's counters), whether one runs now (the checkpointer's
    wait; None when it cannot be seen), and the settings that schedule them."""
    try:
        bgwriter = scalar(conn, "select row_to_json(b) from pg_stat_bgwriter b")
        checkpointer = (scalar(conn, "select row_to_json(c) from pg_stat_checkpointer c")
                        if scalar(conn, "select to_regclass('pg_stat_checkpointer')") else None)
        started = pg_counters.checkpoint_counters(bgwriter, checkpointer)["started"]
        waits = conn.execute("select backend_type, wait_event_type, wait_event, state, 1 from pg_stat_activity "
                             "where backend_type = 'checkpointer'").fetchall()
        settings: dict[str, str] = dict(conn.execute("select name, setting || coalesce(unit, '') from pg_settings "
                                     "where name in ('checkpoint_timeout', 'max_wal_size')").fetchall())
    except psycopg.Error:
        return None, None, {}
    return started, pg_counters.checkpointer_busy(waits), settings


def no_checkpoint_flag(before: tuple, after: tuple, ran_s: float) -> dict[str, Any] | None:
    """A run in which no checkpoint started and none was running: its checkpoint figures are empty,
    and the report says why (a run shorter than checkpoint_timeout, whose timer the CHECKPOINT
    before the run restarted, that wrote less WAL than max_wal_size)."""
    (started0, busy0, settings), (started1, busy1, _) = before, after
    if started0 is None or started1 is None or started1 != started0 or busy0 or busy1:
        return None
    timeout, wal = settings.get("checkpoint_timeout", "?"), settings.get("max_wal_size", "?")
    return flag("no_checkpoint", f"no checkpoint started or ran in the run ({ran_s:.0f} s): it is shorter than "
                                 f"checkpoint_timeout ({timeout}), whose timer the CHECKPOINT before each run "
                                 f"restarts, and wrote less WAL than max_wal_size ({wal}) asks for; "
                                 "its checkpoint figures are empty", checkpoint_timeout=timeout, max_wal_size=wal)


class Watch:
    """What happens on the server during one run's window: started before it, stopped after."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.seen: dict[str, dict[str, Any]] = {}  # "VACUUM public.t" -> {table, what, wraparound}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._before_av: dict[str, tuple[int, int]] = {}
        self._before_wal: int | None = None
        self._ages: tuple[dict[str, int], int, int] = ({}, 0, 0)
        self.error: str | None = None
        self._checkpoints: tuple = (None, None, {})  # _checkpoint_state() at the start
        self._t0 = 0.0

    def __enter__(self) -> Watch:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            self._before_av = _av_counts(conn)
            self._before_wal = _wal_files(conn)
            self._ages = _ages(conn)
            self._checkpoints = _checkpoint_state(conn)
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._poll, name="experiment-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _poll(self) -> None:
        try:
            with psycopg.connect(self.conninfo, autocommit=True, application_name="pgio-tui") as conn:
                while not self._stop.is_set():
                    for (query,) in run_own(conn, "watch", own("autovacuum watch", "select query from "
                                            "pg_stat_activity where backend_type = 'autovacuum worker'"))[1]:
                        self._note(query or "")
                    self._stop.wait(POLL_S)
        except psycopg.Error as exc:  # a restart or a lost link: the counters still tell
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    def _note(self, query: str) -> None:
        m = AUTOVACUUM_QUERY.match(query)
        if not m or m.group(1) == "BRIN summarize":  # vacuums and analyzes
            return
        what, table, rest = m.group(1), m.group(2), m.group(3)
        wrap = "wraparound" in rest
        entry = self.seen.setdefault(f"{what} {table}", {"table": table, "what": what, "wraparound": False})
        entry["wraparound"] = entry["wraparound"] or wrap

    def flags(self) -> list[dict[str, Any]]:
        """After the run: autovacuum in its window, WAL files created, no checkpoint at all."""
        out = []
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            after_av = _av_counts(conn)
            after_wal = _wal_files(conn)
            next_after = _ages(conn)[1]
            checkpoints_after = _checkpoint_state(conn)
            sizes = _sizes(conn, sorted({t for t, (v, a) in after_av.items() if (v, a) != self._before_av.get(t, (0, 0))}
                                        | {e["table"] for e in self.seen.values()}))
        ages, next_before, freeze_max_age = self._ages
        consumed = max(0, next_after - next_before)  # transaction ids used during the run
        counted = {}
        for table, (v, a) in after_av.items():
            bv, ba = self._before_av.get(table, (0, 0))
            if v > bv or a > ba:
                counted[table] = (v - bv, a - ba)
        tables = sorted(set(counted) | {e["table"] for e in self.seen.values()})
        for table in tables:
            vac, anl = counted.get(table, (0, 0))
            seen = [e for e in self.seen.values() if e["table"] == table]
            # said by the worker's query text, or: the table's relfrozenxid age passed
            # autovacuum_freeze_max_age during the window and it was vacuumed
            crossed = table in ages and ages[table] + consumed > freeze_max_age > 0 and vac > 0
            wrap = any(e["wraparound"] for e in seen) or crossed
            what = ", ".join(sorted({e["what"] for e in seen})) or \
                ", ".join(w for w, n in (("VACUUM", vac), ("ANALYZE", anl)) if n)
            kind = "autovacuum_wraparound" if wrap else "autovacuum"
            said = "anti-wraparound autovacuum" if wrap else "autovacuum"
            extra = "" if vac or anl else " (seen running; not yet in its counters at the end)"
            out.append(flag(kind, f"{said} ran in the run's window: {what} {table}{extra}", table=table,
                            vacuums=vac, analyzes=anl, wraparound=wrap, bytes=sizes.get(table)))
        none = no_checkpoint_flag(self._checkpoints, checkpoints_after, time.monotonic() - self._t0)
        if none is not None:
            out.append(none)
        if self._before_wal is not None and after_wal is not None and after_wal > self._before_wal:
            out.append(flag("wal_files_created", f"WAL files created during the run: pg_wal went from "
                                                 f"{self._before_wal} to {after_wal} segments",
                            before=self._before_wal, after=after_wal))
        return out


# --- after a run --------------------------------------------------------------------------------

TOP_STATEMENTS = 10


def statements_after(conninfo: str, top: int = TOP_STATEMENTS) -> list[dict[str, Any]]:
    """pg_stat_statements as the run left it (it was reset before the run): the top statements of the
    workload's database and role (the workload connects as this conninfo does: another client's,
    e.g. a monitoring poller's, are left out when it connects elsewhere or as another role) by total
    time with calls, mean and stddev (ms) — the server's own figures for the whole run, as the
    backend_flush_after article read them; [] without the extension."""
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            if not conn.execute("select 1 from pg_extension where extname = 'pg_stat_statements'").fetchone():
                return []
            rows = conn.execute(
                "select queryid::text, left(query, 200), calls, total_exec_time, mean_exec_time, stddev_exec_time "
                "from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database()) "
                "and userid = (select oid from pg_roles where rolname = current_user) "  # the workload's role
                "order by total_exec_time desc limit %s", [top]).fetchall()
    except psycopg.Error:
        return []  # not in shared_preload_libraries, or a server older than 13's column names
    # "own": a statement this process ran (its query id, pgfeatures.ran()), whatever its text says
    mine = ran()
    return [{"queryid": q, "query": scrub_statement(text), "calls": int(calls), "total_ms": round(float(total), 3),
             "mean_ms": round(float(mean), 6), "stddev_ms": round(float(sd), 6), "own": int(q) in mine}
            for q, text, calls, total, mean, sd in rows]
