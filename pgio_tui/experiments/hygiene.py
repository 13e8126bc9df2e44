"""Run hygiene: what makes a single A/B run lie, done before each run and watched during it.

Before: a CHECKPOINT (no dirty buffers carried over from the last run), pg_stat_statements reset,
then a wait (with a timeout) for the kernel's Dirty to fall under its background threshold, so a run
does not start by paying for the last one's writeback. During: a `Watch` notes autovacuum workers
(their query text says "to prevent wraparound" for anti-wraparound ones) and the per-table
autovacuum/autoanalyze counters, and pg_wal's segment count. Afterwards the run gets flags:
stored in experiment.json with the run, so every reader shows them.

Dirty and its thresholds are this machine's (/proc/meminfo, /proc/vmstat): the server's when it is
local, which an experiment that changes settings and restarts servers assumes anyway.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import psycopg

from pgio_tui import metrics as M
from pgio_tui.sources.kernel import KernelSource

DIRTY_WAIT_S = 60.0  # default longest wait for Dirty to fall under the background threshold
POLL_S = 0.5  # how often the watch looks at pg_stat_activity for autovacuum workers
EARLY = 0.9  # a run shorter than this share of its asked length "ended early"
_SEGMENT = r"^[0-9A-F]{24}$"  # a WAL segment's file name (not .history, .partial, archive_status)
_AV_QUERY = re.compile(r"^autovacuum:\s+(VACUUM(?: ANALYZE)?|ANALYZE)\s+(\S+)(.*)$")

Say = Any  # Callable[[str], object]


def flag(kind: str, text: str, **data: Any) -> dict[str, Any]:
    """One flag on a run: a kind a program can test, a line a person reads, and the facts."""
    return {"kind": kind, "text": text, **data}


# --- before a run -------------------------------------------------------------------------------

def dirty_now() -> tuple[int | None, int | None]:
    """(Dirty kB, background threshold kB) of this machine now."""
    values = KernelSource().sample(None)
    return values.get(M.MEM_DIRTY_KB), values.get(M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB)


def prepare(conninfo: str, *, dirty_wait_s: float = DIRTY_WAIT_S, say: Say = lambda text: None) -> dict[str, Any]:
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
    dirty, threshold = dirty_now()
    said = False
    while dirty is not None and threshold is not None and dirty > threshold:
        if time.monotonic() - t0 >= dirty_wait_s:
            break
        if not said:
            say(f"waiting up to {dirty_wait_s:g} s for Dirty ({dirty // 1024} MB) to fall under the "
                f"background threshold ({threshold // 1024} MB)")
            said = True
        time.sleep(0.5)
        dirty, threshold = dirty_now()
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


def _wal_files(conn: psycopg.Connection) -> int | None:
    try:
        return conn.execute("select count(*) from pg_ls_waldir() where name ~ %s", [_SEGMENT]).fetchone()[0]
    except psycopg.Error:
        return None  # pg_ls_waldir needs superuser or pg_monitor


class Watch:
    """What happens on the server during one run's window: started before it, stopped after."""

    def __init__(self, conninfo: str):
        self.conninfo = conninfo
        self.seen: dict[str, dict[str, Any]] = {}  # "VACUUM public.t" -> {table, what, wraparound}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._before_av: dict[str, tuple[int, int]] = {}
        self._before_wal: int | None = None
        self.error: str | None = None

    def __enter__(self) -> Watch:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            self._before_av = _av_counts(conn)
            self._before_wal = _wal_files(conn)
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
                    for (query,) in conn.execute("select query from pg_stat_activity "
                                                 "where backend_type = 'autovacuum worker'").fetchall():
                        self._note(query or "")
                    self._stop.wait(POLL_S)
        except psycopg.Error as exc:  # a restart or a lost link: the counters still tell
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    def _note(self, query: str) -> None:
        m = _AV_QUERY.match(query)
        if not m:
            return
        what, table, rest = m.group(1), m.group(2), m.group(3)
        wrap = "wraparound" in rest
        entry = self.seen.setdefault(f"{what} {table}", {"table": table, "what": what, "wraparound": False})
        entry["wraparound"] = entry["wraparound"] or wrap

    def flags(self) -> list[dict[str, Any]]:
        """After the run: autovacuum in its window, WAL files created."""
        out = []
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            after_av = _av_counts(conn)
            after_wal = _wal_files(conn)
        counted = {}
        for table, (v, a) in after_av.items():
            bv, ba = self._before_av.get(table, (0, 0))
            if v > bv or a > ba:
                counted[table] = (v - bv, a - ba)
        tables = sorted(set(counted) | {e["table"] for e in self.seen.values()})
        for table in tables:
            vac, anl = counted.get(table, (0, 0))
            seen = [e for e in self.seen.values() if e["table"] == table]
            wrap = any(e["wraparound"] for e in seen)
            what = ", ".join(sorted({e["what"] for e in seen})) or \
                ", ".join(w for w, n in (("VACUUM", vac), ("ANALYZE", anl)) if n)
            kind = "autovacuum_wraparound" if wrap else "autovacuum"
            said = "anti-wraparound autovacuum" if wrap else "autovacuum"
            extra = "" if vac or anl else " (still running at the end)"
            out.append(flag(kind, f"{said} ran in the run's window: {what} {table}{extra}", table=table,
                            vacuums=vac, analyzes=anl, wraparound=wrap))
        if self._before_wal is not None and after_wal is not None and after_wal > self._before_wal:
            out.append(flag("wal_files_created", f"WAL files created during the run: pg_wal went from "
                                                 f"{self._before_wal} to {after_wal} segments",
                            before=self._before_wal, after=after_wal))
        return out
