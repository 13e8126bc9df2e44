"""`pgio-tui info DIR` on an experiment folder: the plan in a few lines, then one line per run in
run order (settings, repeat, state, flags, recording, duration), read from experiment.json and,
for the duration, from each run's own recording."""

from __future__ import annotations

from pathlib import Path

from pgio_tui.experiments.plan import Plan, Run
from pgio_tui.format import DASH, clock
from pgio_tui.safe_text import printable
from pgio_tui.store.reader import Recording, RecordingError

# A run's state as `info` says it: "planned" has not started; "running" left behind by a process
# that ended without saving (killed) is not done either, and resume runs it again.
STATE_WORDS = {"planned": "pending"}
COLUMNS = ("#", "settings", "repeat", "state", "flags", "duration", "recording")


def run_state(run: Run) -> str:
    return STATE_WORDS.get(run.state, run.state)


def run_flags(run: Run) -> list[str]:
    """The kinds of the run's flags (autovacuum in its window, Dirty above the threshold at start,
    …) for the table; their texts follow it (flag_texts). Older plans have none."""
    flags = run.flags or []
    return list(dict.fromkeys(printable(f.get("kind") or "flag" if isinstance(f, dict) else f) for f in flags))


def flag_texts(run: Run) -> list[str]:
    return [printable(f.get("text")) for f in run.flags or [] if isinstance(f, dict) and f.get("text")]


def run_duration(folder: Path, run: Run) -> str:
    """The recorded run's wall time as the runner measured it, else the recording's (first to
    last tick); "unreadable" for a damaged file."""
    if not run.file or run.state == "planned":
        return DASH
    ran = run.ran_s
    if isinstance(ran, (int, float)) and ran >= 0:
        return clock(ran)
    path = folder / run.file
    if not path.exists():
        return "missing"
    try:
        with Recording(path) as rec:
            return clock(rec.duration) if rec.tick_count else "no ticks"
    except (RecordingError, OSError):
        return "unreadable"


def workload_text(plan: Plan) -> str:
    w = plan.workload
    kind = str(w.get("kind", "?"))
    args = w.get("args") or []
    if kind == "pgbench":
        text = "pgbench " + " ".join(str(a) for a in args)
        if w.get("init_scale"):
            text += f" (pgbench -i -s {w['init_scale']} first)"
        return text
    detail = " ".join(f"{k}={v}" for k, v in w.items() if k not in ("kind", "args")) or " ".join(map(str, args))
    return f"{kind} {detail}".strip()


def counts(plan: Plan) -> str:
    states: dict[str, int] = {}
    for r in plan.runs:
        states[run_state(r)] = states.get(run_state(r), 0) + 1
    done = states.pop("done", 0)
    rest = ", ".join(f"{n} {s}" for s, n in states.items())
    return f"{done} of {len(plan.runs)} runs done" + (f", {rest}" if rest else "")


def describe(plan: Plan, folder: str | Path) -> str:
    """The text of `info DIR`."""
    folder = Path(folder)
    target = plan.target
    where = (f"lab cluster (PostgreSQL {target['pg_version']})" if target.get("lab") and target.get("pg_version")
             else "lab cluster" if target.get("lab") else "a server (--allow-settings)")
    restored = {True: "restored", False: "NOT restored yet (running, or stopped without putting them back)",
                None: "never changed"}[plan.restored]
    head = [
        ("experiment", str(folder)),
        ("sweep", "; ".join(f"{n}={','.join(v)}" for n, v in plan.sweep.items())),
        ("runs", f"{len(plan.runs)}: {len(plan.combinations())} combination(s) × {plan.repeat} repeat(s), "
                 f"{plan.order}" + (f" (seed {plan.seed})" if plan.order == "random" else "")),
        ("workload", workload_text(plan)),
        ("target", where),
        ("hygiene", ", ".join(x for x in ("first run discarded" if plan.discard_first else "",
                                          f"{plan.warmup_s:g} s warm-up per run" if plan.warmup_s else "",
                                          f"{plan.restart_warmup_s:g} s warm-up after a restart"
                                          if plan.restart_warmup_s else "",
                                          f"ticks every {plan.interval:g} s") if x)),
        ("state", f"{counts(plan)}; settings {restored}"),
    ]
    width = max(len(k) for k, _ in head)
    lines = [f"{k:<{width}}  {printable(v)}" for k, v in head]
    rows = [(str(r.index), printable(r.label), str(r.repeat), run_state(r), ", ".join(run_flags(r)) or DASH,
             run_duration(folder, r), printable(r.file or DASH)) for r in plan.runs]
    widths = [max(len(c) for c in col) for col in zip(COLUMNS, *rows)]
    fmt = "  ".join(f"{{:{'>' if i in (0, 2, 5) else '<'}{w}}}" for i, w in enumerate(widths))
    lines += ["", *(fmt.format(*row).rstrip() for row in [COLUMNS, *rows])]
    notes = [f"run {r.index}: {text}" for r in plan.runs
             for text in ([printable(r.note)] if r.note else []) + flag_texts(r)]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)
