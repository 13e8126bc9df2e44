"""The loop over an experiment's runs: settings, hygiene, one recording per run, plan saved after
each, the original settings put back whatever ends it (the end, an error, Ctrl-C, SIGTERM).

How a run samples and records is the caller's (`RunOne`: commands/experiment.py builds one Session
per run); this module only decides what happens around it, so it stays below the session layer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg

from pgio_tui.experiments import settings as guc
from pgio_tui.experiments.plan import Plan, Run, save

# RunOne(kind, path): kind "discard" (after init, not kept), "warmup" (before a run, not kept) or
# "run" (recorded to path). Returns (state, note): state "done", "interrupted" or "failed".
RunOne = Callable[[str, Path | None], tuple[str, str]]
Say = Callable[[str], object]


class Interrupted(Exception):
    """The user stopped the experiment (Ctrl-C, SIGTERM) during a run."""


def hygiene(conninfo: str) -> list[str]:
    """Before each run: a CHECKPOINT (no dirty buffers carried over from the last run) and
    pg_stat_statements reset when the extension is there. Returns what was done."""
    done = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        done.append("checkpoint")
        if conn.execute("select 1 from pg_extension where extname = 'pg_stat_statements'").fetchone():
            try:
                conn.execute("select pg_stat_statements_reset()")
                done.append("pg_stat_statements reset")
            except psycopg.Error:
                pass  # loaded in the database but not in shared_preload_libraries
    return done


def run_all(plan: Plan, folder: Path, conninfo: str, run_one: RunOne, *, restart: guc.Restart | None,
            say: Say = lambda text: None) -> None:
    """Run every pending run of `plan` in order; Interrupted when the user stopped one (it is kept,
    marked interrupted, and run again by resume)."""
    names = list(plan.sweep)
    if not plan.originals:
        plan.originals = guc.read_originals(conninfo, names)
    plan.restored = False
    save(plan, folder)
    try:
        pending = plan.pending()
        if pending and plan.discard_first:
            _apply(plan, pending[0], conninfo, restart)
            say(f"discarded first run ({pending[0].label}): warms the cache and creates WAL segments")
            state, note = run_one("discard", None)
            if state == "interrupted":
                raise Interrupted()
        for run in pending:
            _one(plan, run, folder, conninfo, run_one, restart, say)
            if run.state == "interrupted":
                raise Interrupted()
    finally:
        try:
            guc.restore(conninfo, plan.originals, restart)
            plan.restored = True
            say("settings restored: " + ", ".join(f"{n}={f['auto_conf'] if f['auto_conf'] is not None else 'RESET'}"
                                                  for n, f in plan.originals.items()))
        finally:
            save(plan, folder)


def _apply(plan: Plan, run: Run, conninfo: str, restart: guc.Restart | None) -> dict[str, str]:
    return guc.apply(conninfo, dict(run.settings), restart)


def _one(plan: Plan, run: Run, folder: Path, conninfo: str, run_one: RunOne, restart, say: Say) -> None:
    run.applied = _apply(plan, run, conninfo, restart)
    if plan.warmup_s > 0:
        state, _ = run_one("warmup", None)
        if state == "interrupted":
            run.state = "interrupted"
            return
    done = hygiene(conninfo)
    path = folder / plan.run_file(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():  # an interrupted earlier attempt: kept beside, never overwritten
        n = 1
        while path.with_suffix(f".interrupted-{n}.pgio").exists():
            n += 1
        path.rename(path.with_suffix(f".interrupted-{n}.pgio"))
    say(f"run {run.index}/{len(plan.runs)}: {run.label} (repeat {run.repeat}); {', '.join(done)}")
    run.file, run.state = str(path.relative_to(folder)), "running"
    save(plan, folder)  # a crash now leaves it "running": not done, so resume runs it again
    run.state, run.note = run_one("run", path)
    save(plan, folder)
