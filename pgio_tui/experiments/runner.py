"""The loop over an experiment's runs: settings, hygiene, one recording per run, plan saved after
each, the original settings put back whatever ends it (the end, an error, Ctrl-C, SIGTERM).

How a run samples and records is the caller's (`RunOne`: commands/experiment.py builds one Session
per run); this module only decides what happens around it, so it stays below the session layer.
Around each run: settings applied (ALTER SYSTEM + reload or restart; `os.page_cache` by a cgroup),
--reinit, the warm-up (unrecorded: --warmup before every run, --restart-warmup after a restart),
hygiene.prepare (CHECKPOINT, pg_stat_statements reset, Dirty under the background threshold), a
hygiene.Watch during the run, and the run's flags afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from pgio_tui.experiments import hygiene
from pgio_tui.experiments import settings as guc
from pgio_tui.experiments import workloads
from pgio_tui.experiments.plan import Plan, Run, os_settings, save
from pgio_tui.workloads.base import WorkloadError, connection_failed
from pgio_tui.private import make_dir

if TYPE_CHECKING:
    from pgio_tui.experiments.page_cache import Cap

# RunOne(kind, path): kind "discard" (after init, not kept), "warmup" (before a run, not kept) or
# "run" (recorded to path). Returns (state, note): state "done", "interrupted" or "failed".
RunOne = Callable[[str, Path | None], tuple[str, str]]
Say = Callable[[str], object]


class Interrupted(Exception):
    """The user stopped the experiment (Ctrl-C, SIGTERM) during a run."""


class Target:
    """The server an experiment changes: its conninfo, how it restarts (None: it may not) and the
    page-cache cap when os.page_cache is swept."""

    def __init__(self, conninfo: str, restart: guc.Restart | None, *, tag: str = "experiment"):
        self.conninfo = conninfo
        self._restart = restart
        self.restart = self._restarted if restart is not None else None
        self.tag = tag
        self.cap: Cap | None = None  # made on first use
        self.last: dict[str, str] = {}  # what this process last set (a resume starts from nothing)
        self._sb_in_cap = False
        self.fresh = False  # restarted since the cap last moved the postmaster: its shared memory is untouched
        self.workload: dict[str, Any] | None = None  # the workload of the run under way (workloads.for_run)
        self.set_up: tuple | None = None  # what the workload was last set up for (workloads.setup_key)
        self.restarts = 0  # restarts so far: a run whose settings restarted the server warms up first
        self.warmup_s = 0.0  # the length of the warm-up under way (RunOne "warmup")

    def _restarted(self) -> None:
        if self._restart is not None:
            self._restart()
        self.fresh = True
        self.restarts += 1

    def page_cache(self, value: str | None, lab: bool) -> dict[str, Any]:
        """Cap the server's page cache at value (None: lift the cap); the facts of the cap.

        The first cap restarts the server when it may (a lab, --allow-restart), so that its shared
        buffers, touched afresh by backends inside the cgroup, are charged there (and allowed for in
        the limit), and drops PGDATA's pages cached before, which were charged elsewhere."""
        from pgio_tui.experiments import page_cache as pc
        import os
        if value is None:
            if self.cap is not None:
                self.cap.release()
            return {}
        size = pc.parse_size(value)
        if not lab and os.geteuid() != 0:
            raise pc.PageCacheError(f"{pc.NAME}: a lab cluster or root is needed to cap a server's page cache")
        cap, first = self.cap, self.cap is None
        if cap is None:
            cap = self.cap = pc.Cap(self.tag)
            if self.restart is not None and not self.fresh:
                self.restart()
        facts = guc.server_facts(self.conninfo)
        if facts["postmaster"] is None:
            raise pc.PageCacheError(f"{pc.NAME}: the server is not on this machine")
        if first or self.fresh:
            self._sb_in_cap = self.fresh
        out = cap.set(facts["postmaster"], size, facts["shared_buffers_bytes"] if self._sb_in_cap else 0)
        self.fresh = False
        if first:
            with psycopg.connect(self.conninfo, autocommit=True) as conn:
                conn.execute("CHECKPOINT")  # clean pages, which DONTNEED drops
            out["evicted_files"] = pc.evict(facts["datadir"])
        return out


def check_target(plan: Plan, conninfo: str, *, lab: bool, restart_allowed: bool) -> dict[str, dict[str, Any]]:
    """Before anything changes: the originals of the swept settings; SettingsError when one needs a
    restart that is not allowed, PageCacheError when os.page_cache cannot work here."""
    names = [n for n in plan.sweep if n not in os_settings()]
    originals = guc.read_originals(conninfo, names) if names else {}
    restarts = guc.needs_restart(originals)
    if restarts and not (lab or restart_allowed):
        raise guc.SettingsError(f"{', '.join(restarts)} needs a server restart: add --allow-restart "
                                "(the server is restarted with pg_ctl, then back to its settings at the end)")
    check_host(plan)
    return originals


def check_host(plan: Plan) -> None:
    """What this machine must allow, before any server is touched: os.page_cache needs a cgroup
    memory controller, and a lab cluster or root. PageCacheError, one line."""
    from pgio_tui.experiments import page_cache as pc
    import os
    if pc.NAME not in plan.sweep:
        return
    for value in plan.sweep[pc.NAME]:
        pc.parse_size(value)
    pc.hierarchy()
    if not plan.target.get("lab") and os.geteuid() != 0:
        raise pc.PageCacheError(f"{pc.NAME}: a lab cluster or root is needed to cap a server's page cache")


def run_all(plan: Plan, folder: Path, conninfo: str | Target, run_one: RunOne, *,
            restart: guc.Restart | None = None, say: Say = lambda text: None) -> None:
    """Run every pending run of `plan` in order; Interrupted when the user stopped one (it is kept,
    marked interrupted, and run again by resume)."""
    target = conninfo if isinstance(conninfo, Target) else Target(conninfo, restart)
    names = [n for n in plan.sweep if n not in os_settings()]
    if not plan.originals and names:
        plan.originals = guc.read_originals(target.conninfo, names)
    plan.restored = False
    save(plan, folder)
    try:
        pending = plan.pending()
        if pending and plan.discard_first:
            _apply(plan, pending[0], target)
            say(f"discarded first run ({pending[0].label}): warms the cache and creates WAL segments")
            state, note = run_one("discard", None)
            if state == "interrupted":
                raise Interrupted()
            _stop_if_unreachable(plan, "the discarded first run", state, note)
        for run in pending:
            _one(plan, run, folder, target, run_one, say)
            if run.state == "interrupted":
                raise Interrupted()
            _stop_if_unreachable(plan, f"run {run.index}", run.state, run.note)
        while plan.auto and not settled(plan, folder, say):
            for run in plan.add_round():
                _one(plan, run, folder, target, run_one, say)
                if run.state == "interrupted":
                    raise Interrupted()
    finally:
        try:
            _restore(plan, target, say)
        finally:
            save(plan, folder)


def _stop_if_unreachable(plan: Plan, which: str, state: str, note: str) -> None:
    """Before any run is done, a workload that could not connect ends the experiment: the next
    runs would fail the same way (one line, not a failure per run)."""
    if state == "failed" and connection_failed(note) and not any(r.state == "done" for r in plan.runs):
        line = next((ln.strip() for ln in (note or "").splitlines() if ln.strip()), "")
        raise WorkloadError(f"{which} could not connect, so no other run is tried: {line}")


def settled(plan: Plan, folder: Path, say: Say = lambda text: None) -> bool:
    """--repeat auto: are the headline verdicts settled? Every combination's first two headline
    figures against the baseline either "changed" or able to see a change of AUTO_TARGET_PCT; else
    True only when the repeats (max_repeat) or the time (budget_s, from the first change) run out."""
    from pgio_tui.experiments import results
    from pgio_tui.experiments.figures import HEADLINE
    from pgio_tui.experiments.plan import AUTO_TARGET_PCT
    res = results.collect(plan, folder, results.parse_baseline(None, plan))
    shown = {f.key for f in res.present()}
    keys = [k for k in HEADLINE if k in shown][:2]
    open_ = [f"{row.label}: {k}" for row in res.rows if not row.baseline for k in keys
             if (ch := row.changes.get(k)) is not None and ch.verdict != "changed"
             and not (ch.detectable_pct is not None and ch.detectable_pct <= AUTO_TARGET_PCT)]
    if not open_:
        say(f"repeat auto: settled at {plan.repeat} repeats")
        return True
    spent = time.time() - plan.changes[0]["t"] if plan.changes else 0.0
    budget = plan.auto.get("budget_s")
    if plan.repeat >= int(plan.auto.get("max_repeat") or 0) or (budget is not None and spent >= budget):
        say(f"repeat auto: not settled at {plan.repeat} repeats ({'; '.join(open_[:3])}), and the "
            + ("repeats" if plan.repeat >= int(plan.auto.get("max_repeat") or 0) else "time") + " ran out")
        return True
    say(f"repeat auto: {len(open_)} headline verdict(s) not settled ({'; '.join(open_[:3])}): one more repeat")
    return False


def _restore(plan: Plan, target: Target, say: Say) -> None:
    from pgio_tui.experiments import page_cache as pc
    errors = []
    if pc.NAME in plan.sweep:
        try:
            target.page_cache(None, lab=bool(plan.target.get("lab")))
            _log(plan, "restore", {pc.NAME: None})
        except pc.PageCacheError as exc:
            errors.append(str(exc))
    if plan.originals:
        back = {n: f["auto_conf"] for n, f in plan.originals.items()}
        guc.apply(target.conninfo, back, target.restart)
        _log(plan, "restore", back)
    plan.restored = not errors
    what = [f"{n}={f['auto_conf'] if f['auto_conf'] is not None else 'RESET'}" for n, f in plan.originals.items()]
    if pc.NAME in plan.sweep:
        what.append(f"{pc.NAME}: cap lifted" if not errors else f"{pc.NAME}: {errors[0]}")
    say("settings restored: " + ", ".join(what))


def _log(plan: Plan, action: str, values: dict[str, Any]) -> None:
    """What the experiment changed on the server, in order (kept in experiment.json)."""
    plan.changes.append({"t": round(time.time(), 3), "action": action, "values": dict(values)})


def _apply(plan: Plan, run: Run, target: Target) -> dict[str, str]:
    from pgio_tui.experiments import page_cache as pc
    wanted = {n: v for n, v in run.settings.items() if n not in os_settings()}
    gucs = {n: v for n, v in wanted.items() if target.last.get(n) != v}  # unchanged: no reload, no restart
    applied = guc.apply(target.conninfo, gucs, target.restart) if gucs else {}
    if gucs:
        _log(plan, "set", gucs)
    kept = [n for n in wanted if n not in gucs]
    if kept:
        applied.update(guc.read_back(target.conninfo, kept))
    applied = {n: applied[n] for n in wanted}
    target.last.update(wanted)
    if pc.NAME in run.settings:  # after a restart: the new postmaster goes into the cgroup
        run.page_cache = target.page_cache(run.settings[pc.NAME], lab=bool(plan.target.get("lab")))
        applied[pc.NAME] = run.settings[pc.NAME]
        _log(plan, "set", {pc.NAME: run.settings[pc.NAME], "limit_bytes": run.page_cache["limit_bytes"]})
    return applied


def _one(plan: Plan, run: Run, folder: Path, target: Target, run_one: RunOne, say: Say) -> None:
    run.flags = []
    restarts = target.restarts
    run.applied = _apply(plan, run, target)
    target.workload = workloads.for_run(plan.workload, run.settings)
    if plan.reinit or workloads.setup_key(target.workload) != target.set_up:
        workloads.setup(target.workload, target.conninfo, say)  # --reinit, or a scale swept
        target.set_up = workloads.setup_key(target.workload)
    after_restart = target.restarts != restarts
    warm = max(plan.warmup_s, plan.restart_warmup_s if after_restart else 0.0)
    if after_restart or warm > 0:  # kept even at 0 s: the report says which runs start cold
        run.warmup = {"s": warm, "after_restart": after_restart}
    if warm > 0:
        if after_restart and warm > plan.warmup_s:
            say(f"run {run.index}/{len(plan.runs)}: the server restarted: {warm:g} s of the workload first, "
                "not recorded (cold caches)")
        t0 = time.time()
        target.warmup_s = warm
        state, note = run_one("warmup", None)
        run.warmup.update({"start_t": round(t0, 3), "end_t": round(time.time(), 3), "state": state})
        if state == "interrupted":
            run.state = "interrupted"
            return
    prep = hygiene.prepare(target.conninfo, dirty_wait_s=plan.dirty_wait_s, say=say)
    run.hygiene = prep
    start_flags = hygiene.start_flags(prep, plan.dirty_wait_s)
    path = folder / plan.run_file(run)
    make_dir(path.parent)
    if path.exists():  # an interrupted earlier attempt: kept beside, never overwritten
        n = 1
        while path.with_suffix(f".interrupted-{n}.pgio").exists():
            n += 1
        path.rename(path.with_suffix(f".interrupted-{n}.pgio"))
    done = ["checkpoint"] + (["pg_stat_statements reset"] if prep["pgss_reset"] else [])
    say(f"run {run.index}/{len(plan.runs)}: {run.label} (repeat {run.repeat}); {', '.join(done)}"
        + "".join(f"; {f['text']}" for f in start_flags))
    run.file, run.state = str(path.relative_to(folder)), "running"
    save(plan, folder)  # a crash now leaves it "running": not done, so resume runs it again
    t0 = time.monotonic()
    with hygiene.Watch(target.conninfo) as watch:
        run.state, run.note = run_one("run", path)
    run.ran_s = round(time.monotonic() - t0, 1)
    run.statements = hygiene.statements_after(target.conninfo)
    flags = start_flags + hygiene.outcome_flags(run.state, run.note, run.ran_s, workloads.asked_s(plan.workload))
    try:
        flags += watch.flags()
    except Exception as exc:  # noqa: BLE001 - the server went away: the run is kept, unflagged, said
        flags.append(hygiene.flag("unwatched", f"the run's window could not be checked: {exc}"))
    if target.cap is not None:
        run.page_cache = {**(run.page_cache or {}), "at_end": target.cap.usage()}
    run.flags = flags  # said once, with the run's line (experiments/progress.py, Progress.finished)
    save(plan, folder)
