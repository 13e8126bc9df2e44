"""What a workload's record says: the user's command, how it ended, what failed inside it.

One place for these facts, shared by the bench exit line, `info`, the report and replay: a
workload's row (kind, argv, params, exit_code, summary) as the recorder stores it.
"""

from __future__ import annotations

import os
from typing import Any

EXIT_INTERRUPTED = 130  # a workload stopped early (SIGINT), as a shell reports it
PGBENCH_INIT_DONE = "pgbench -i done"  # a workload's progress notes: events of kind "note" that say
PGIO_RUN_STARTED = "pgio run started: "  # nothing is degraded (marked {"workload": kind} since)


def workload_progress(text: str, data: dict[str, Any]) -> bool:
    """Whether a "note" event is a workload's progress (pgbench's init done, pgio's sessions
    launched), not something degraded: marked so by the workload, or, in a recording written
    before the mark, its text."""
    return bool(data.get("workload")) or text == PGBENCH_INIT_DONE or text.startswith(PGIO_RUN_STARTED)


def workload_command(w: dict[str, Any]) -> str:
    """A recorded workload's command as the user gave it (`pgbench -c 4 -T 60`): the program's
    name without its path, and without the -P/-l/--log-prefix pgio-tui added for its own use."""
    import shlex  # not at start-up: the live view imports this module for workload_progress

    argv = w.get("argv") or []
    if not isinstance(argv, list):
        return str(argv)
    params = p if isinstance(p := w.get("params"), dict) else {}
    user = params.get("user_args")
    words = [str(a) for a in (user if isinstance(user, list) else argv[1:])]
    if argv:
        words.insert(0, os.path.basename(str(argv[0])))
    return shlex.join(words) if words else str(w.get("kind") or "")


def workload_failures(summary: Any) -> list[str]:
    """What went wrong inside a workload's run, from its summary: pgbench's failed and skipped
    transactions, pgio's deadlocks."""
    if not isinstance(summary, dict):
        return []
    measured = m if isinstance(m := summary.get("measured"), dict) else {}
    out = []
    failed = summary.get("failed", measured.get("failed"))
    if isinstance(failed, int) and failed:
        pct = summary.get("failed_pct")
        out.append(f"{failed} failed transactions" + (f" ({pct:g} %)" if isinstance(pct, (int, float)) else ""))
    skipped = summary.get("skipped", measured.get("skipped"))
    if isinstance(skipped, int) and skipped:
        out.append(f"{skipped} skipped transactions")
    deadlocks = summary.get("deadlocks")
    if isinstance(deadlocks, int) and deadlocks:
        out.append(f"{deadlocks} deadlocks")
    return out


def workload_outcome(w: dict[str, Any]) -> str:
    """How a workload ended, in a few words: exit status (130: ended early), failures. `w` is a
    recorded workloads row (or any dict with exit_code and summary)."""
    code, summary = w.get("exit_code"), w.get("summary")
    if code is None:
        words = ["no exit status (the recording ended while it ran)"]
    elif code == EXIT_INTERRUPTED or (isinstance(summary, dict) and (summary.get("interrupted") or summary.get("stopped"))):
        words = [f"ended early (exit {code}: interrupted)"]
    elif code:
        words = [f"failed (exit {code})"]
    else:
        words = ["exit 0"]
    return ", ".join(words + workload_failures(summary))
