"""`pgio-tui experiment run|resume|report`: a setting sweep with repeats, one recording per run,
one table of results. The plan, run order and settings are pgio_tui/experiments/; each run here is
one Session driven headless, like `bench pgbench --headless`."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from pgio_tui.errors import PROG, CliError, say
from pgio_tui.experiments.plan import (AUTO_MAX_REPEAT, AUTO_START, PLAN_FILE, RUNS_DIR, Plan, PlanError, load,
                                      os_settings, parse_set, save)
from pgio_tui.private import make_dir, write_text

LAB_SETTINGS = {"log_autovacuum_min_duration": "0"}
DEFAULT_LAB_SCALE = 10


def run(args: argparse.Namespace) -> int:
    try:
        return {"run": _run, "resume": _resume, "report": _report}[args.action](args)
    except _one_line_errors() as exc:
        raise CliError(_first_line(exc)) from None


def _one_line_errors() -> tuple[type[Exception], ...]:
    """What the experiment's layers raise for the user: one line each."""
    from pgio_tui.experiments.page_cache import PageCacheError
    from pgio_tui.experiments.settings import SettingsError
    from pgio_tui.workloads.base import WorkloadError
    from pgio_tui.workloads.pg_binaries import ClusterError
    return PlanError, SettingsError, WorkloadError, ClusterError, PageCacheError


# --- run and resume -----------------------------------------------------------------------------

def _run(args: argparse.Namespace) -> int:
    folder = Path(args.output)
    if (folder / PLAN_FILE).exists():
        raise CliError(f"{folder} holds an experiment already: continue it with `{PROG} experiment resume "
                       f"{folder}`, or start over: remove it (rm -r {folder}) or choose another -o DIR")
    if folder.exists() and any(folder.iterdir()):
        raise CliError(f"{folder} exists and is not empty: choose a new -o DIR")
    from pgio_tui.experiments import workloads
    if not args.lab and not args.allow_settings:
        raise CliError("experiment run changes settings on this server (ALTER SYSTEM, then back): "
                       "add --allow-settings, or use --lab for a throwaway cluster")
    sweep = dict(parse_set(s) for s in args.set)
    if len(sweep) != len(args.set):
        raise CliError("a setting is given in two --set options: give all its values in one")
    init_scale = args.init_scale if args.init_scale is not None else (DEFAULT_LAB_SCALE if args.lab else None)
    words = args.pgbench_args if args.workload == "pgbench" else args.workload_args
    if args.workload == "pgbench" and args.workload_args and not args.pgbench_args:
        raise CliError("put pgbench's arguments after --: pgbench -- -c 4 -T 60")
    spec = workloads.parse(args.workload, list(words), init_scale)
    if args.reinit and args.workload == "sql":
        raise CliError("--reinit sets the workload up again per run: pgbench -i or pgio's tables; "
                       "sql has --before 'SQL' for that")
    auto = _auto(args)
    plan = Plan(sweep=sweep, repeat=AUTO_START if auto else args.repeat, order=args.order, workload=spec, auto=auto,
                target={"lab": bool(args.lab), "pg_version": args.pg_version}, warmup_s=args.warmup,
                restart_warmup_s=args.restart_warmup, discard_first=args.discard_first, seed=args.seed,
                interval=args.interval, reinit=args.reinit, dirty_wait_s=args.dirty_wait)
    plan.check()
    from pgio_tui.experiments.runner import check_host
    check_host(plan)  # before the folder is made: a host that cannot run it leaves nothing behind
    plan.make_runs()
    return _execute(plan, folder, args, new=True)


def _auto(args: argparse.Namespace) -> dict:
    """--repeat auto and its limits as the plan keeps them; {} for a fixed number of repeats."""
    if args.repeat != "auto":
        if args.max_repeat is not None or args.budget:
            raise CliError("--max-repeat and --budget go with --repeat auto")
        return {}
    from pgio_tui.store.player import parse_seconds
    try:
        budget = parse_seconds(args.budget) if args.budget else None
    except ValueError:
        raise CliError(f"--budget {args.budget!r}: a time such as 30m, 1h or 90s") from None
    most = AUTO_MAX_REPEAT if args.max_repeat is None else args.max_repeat
    if most < AUTO_START:
        raise CliError(f"--max-repeat {most}: at least {AUTO_START}")
    return {"max_repeat": most, "budget_s": budget}


def _resume(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    plan = load(folder)
    if not plan.pending():
        say(f"{PROG}: experiment: all {len(plan.runs)} runs are done; see `{PROG} experiment report {folder}`")
        return 0
    if not plan.target.get("lab") and not args.allow_settings:
        raise CliError("resuming changes settings on this server (ALTER SYSTEM, then back): add --allow-settings")
    args.allow_restart = getattr(args, "allow_restart", False)
    say(f"{PROG}: experiment: resuming {folder}: {len(plan.pending())} of {len(plan.runs)} runs to go")
    return _execute(plan, folder, args)


def _execute(plan: Plan, folder: Path, args: argparse.Namespace, new: bool = False) -> int:
    """The runs; with `new`, the folder is made once the settings' values are checked on the server,
    and removed again when the experiment fails before its first recorded run."""
    from pgio_tui.commands.common import conninfo_of
    from pgio_tui.experiments import runner, workloads
    from pgio_tui.experiments import settings as guc
    from pgio_tui.commands.experiment_progress import Reporter
    from pgio_tui.experiments.progress import Progress
    shown = Reporter(Progress(plan, folder), quiet=args.quiet)
    previous = _term_as_interrupt()
    cluster = made = None
    try:
        lab = bool(plan.target.get("lab"))
        if lab:
            cluster = _lab(plan)
            conninfo, restart = cluster.conninfo(), cluster.restart
        else:
            conninfo = conninfo_of(args)
            restart = guc.server_restart(conninfo) if args.allow_restart else None
        if new:  # every name and value, before the first change
            guc.check_values(conninfo, {n: v for n, v in plan.sweep.items() if n not in os_settings()})
        runner.check_target(plan, conninfo, lab=lab, restart_allowed=bool(args.allow_restart))
        if new:
            made = _make_folder(plan, folder)
            say(f"{PROG}: experiment: {len(plan.runs)} runs ({plan.order}) into {folder}")
        first = workloads.for_run(plan.workload, plan.pending()[0].settings if plan.pending() else {})
        workloads.setup(first, conninfo, say=shown.say, progress=None if args.quiet else _setup_bar())
        target = runner.Target(conninfo, restart, tag=folder.resolve().name)
        target.workload, target.set_up = first, workloads.setup_key(first)
        if getattr(args, "tui", False):
            _in_tui(plan, folder, target, conninfo, shown, args)
        else:
            runner.run_all(plan, folder, target,
                           shown.wrap(lambda kind, path: _run_one(plan, conninfo, kind, path, args.quiet, shown.bar,
                                                                  spec=target.workload, warmup_s=target.warmup_s)),
                           say=shown.say)
    except (runner.Interrupted, KeyboardInterrupt):
        shown.results_table()
        done = sum(r.state == "done" for r in plan.runs)
        say(f"{PROG}: experiment interrupted: {done} of {len(plan.runs)} runs kept; continue with "
            f"`{PROG} experiment resume {folder}`")
        return 130
    except Exception as exc:
        if made is None or any(r.file for r in plan.runs):
            raise
        _unmake_folder(folder, made)  # failed before its first recorded run: nothing to resume
        if not isinstance(exc, (CliError, *_one_line_errors())):
            raise
        raise (type(exc) if isinstance(exc, CliError) else CliError)(
            f"{_first_line(exc)}; nothing was kept: correct the command and run it again") from None
    finally:
        if cluster is not None:
            cluster.destroy()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    shown.results_table()
    failed = [r for r in plan.runs if r.state == "failed"]
    say(f"{PROG}: experiment: {len(plan.runs) - len(failed)} runs done"
        + (f", {len(failed)} failed (see experiment.json)" if failed else "")
        + f"; `{PROG} experiment report {folder}`")
    return 1 if failed else 0


def _setup_bar():
    """workloads.setup's progress as a headless bar (headless.SetupBar), one per step."""
    from pgio_tui.headless import SetupBar
    bars: dict[str, SetupBar] = {}

    def progress(label: str, fraction: float | None) -> None:
        if fraction is None:
            if label in bars:
                bars.pop(label).done(complete=False)  # its last figure stays: 100 % when it completed
            return
        bars.setdefault(label, SetupBar(f"{PROG}: experiment: {label}")).update(fraction)
    return progress


def _make_folder(plan: Plan, folder: Path) -> bool:
    """DIR and its experiment.json; True when DIR itself was made here (it may exist, empty)."""
    created = not folder.exists()
    make_dir(folder)
    save(plan, folder)
    return created


def _unmake_folder(folder: Path, created: bool) -> None:
    """What _make_folder and the runner wrote, when no run was recorded: a failed start leaves nothing."""
    import shutil
    shutil.rmtree(folder / RUNS_DIR, ignore_errors=True)
    for name in (PLAN_FILE, f"{PLAN_FILE}.tmp"):
        (folder / name).unlink(missing_ok=True)
    if created:
        try:
            folder.rmdir()
        except OSError:
            pass  # something else was put there meanwhile: left as it is


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _lab(plan: Plan):
    from pgio_tui.commands.demo import start_lab
    from pgio_tui.workloads.pg_binaries import find_bindir
    return start_lab("experiment", LAB_SETTINGS, bindir=find_bindir(plan.target.get("pg_version")))


def _in_tui(plan: Plan, folder: Path, target, conninfo: str, shown, args: argparse.Namespace) -> None:
    """The runs in the live monitor with the experiment strip (tui/experiment.py); the runner's
    messages become notifications. Interrupted when the user quit before the end."""
    from pgio_tui.experiments import runner
    from pgio_tui.session import open_sampler
    from pgio_tui.tui.experiment import run_experiment_tui

    def body(feed) -> None:
        shown.out, shown.lines_out = feed.tell, feed.finished_line

        def one(kind: str, path: Path | None) -> tuple[str, str]:
            if feed.quitting:
                return "interrupted", "stopped by the user"
            return _run_one(plan, conninfo, kind, path, True, feed, on_session=feed.on_session,
                            spec=target.workload, warmup_s=target.warmup_s)
        runner.run_all(plan, folder, target, shown.wrap(one), say=shown.say)

    sampler = open_sampler(conninfo, plan.interval)  # describes the server for the header
    try:
        feed = run_experiment_tui(sampler, body, shown.progress, theme=getattr(args, "theme", None),
                                  say=lambda text: say(f"{PROG}: experiment: {text}"))
    finally:
        shown.out = shown.lines_out = None
        sampler.close()
    if feed.error is not None:
        raise feed.error
    if feed.quitting and plan.pending():
        raise runner.Interrupted()


def _run_one(plan: Plan, conninfo: str, kind: str, path: Path | None, quiet: bool,
             status=None, on_session=None, spec: dict | None = None, warmup_s: float = 0.0) -> tuple[str, str]:
    """One Session: the workload (the run's `spec`, else the plan's; shortened to `warmup_s` for
    kind "warmup"), recorded to path."""
    from pgio_tui.experiments.workloads import make
    from pgio_tui.headless import run_headless
    from pgio_tui.session import Session, open_sampler
    from pgio_tui.workloads.launch import data_devices
    sampler = open_sampler(conninfo, plan.interval)
    try:
        length = (warmup_s or plan.warmup_s) if kind == "warmup" else None
        workload = make(spec or plan.workload, conninfo, warmup_s=length, devices=data_devices(sampler))
        session = Session(sampler, workload=workload)
        if path is not None:
            session.record(str(path))
        if on_session is not None:
            on_session(session)
        run_headless(session, label=str(path) if path else kind, quiet=quiet, status=status,
                     show_output=False)  # kept in the recording; the runs' lines say how each went
    finally:
        sampler.close()
    if workload.stop_requested:
        return "interrupted", "stopped by the user"
    if workload.error or workload.exit_code:
        return "failed", str(workload.error or f"{workload.kind} exited with {workload.exit_code}")
    return "done", ""


def _term_as_interrupt() -> dict:
    """Between runs SIGTERM and SIGHUP unwind like Ctrl-C, so the settings are put back (during a
    run the headless driver's handlers stop the workload first)."""
    def handler(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}


# --- report -------------------------------------------------------------------------------------

def _report(args: argparse.Namespace) -> int:
    from pgio_tui.experiments import results
    from pgio_tui.experiments.report import render
    dirs = args.dir if isinstance(args.dir, list) else [args.dir]
    plan = load(dirs[0]) if len(dirs) == 1 else results.merge([(load(d), Path(d)) for d in dirs])
    args.dir = " ".join(str(d) for d in dirs)
    fmt = args.format or ("html" if args.output and str(args.output).lower().endswith((".html", ".htm")) else "table")
    baseline = results.parse_baseline(args.baseline, plan)
    res = results.collect(plan, dirs[0], baseline)
    res.pick = tuple(getattr(args, "figures", None) or ())
    if res.pick and not res.shown():
        raise CliError(f"--figures {' '.join(res.pick)}: no figure of this experiment matches; its names are in "
                       f"`{PROG} experiment report {args.dir} --format json`")
    if not any(r.runs for r in res.rows):
        raise CliError(f"{args.dir}: no finished run yet; `{PROG} experiment resume {args.dir}` runs them")
    pending = len(plan.pending())
    if pending:
        say(f"{PROG}: experiment: {pending} of {len(plan.runs)} runs not done: figures are of the finished ones")
    text = render(res, fmt)
    if not args.output:
        print(text, end="")
        return 0
    out = Path(args.output)
    try:
        write_text(out, text)
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    say(f"{PROG}: experiment: {fmt} report written to {out}")
    return 0
