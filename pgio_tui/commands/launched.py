"""A launched workload under the sampler (bench, demo): in the live TUI, or headless.

Headless (`--headless`, or stdout is not a terminal) is `pgio-tui record` plus a workload
(pgio_tui/headless.py); otherwise the live view runs the same Session on a thread.
"""

from __future__ import annotations

import sys

from pgio_tui.errors import PROG, say
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, end_workload
from pgio_tui.workloads.base import Workload


def run_session(sampler, workload: Workload, *, record: str | None = None, force: bool = False,
                headless: bool = False, theme: str | None = None) -> int:
    """Start `workload`, show it live (or headless) until it ends or the user stops it; exit code.
    The caller has checked `record` against --force before connecting (commands.common.check_overwrite)."""
    if headless or not sys.stdout.isatty():
        session = Session(sampler, workload=workload)
        if record:
            session.record(record, force)
        run_headless(session, label=record or "not recorded")
        rc = 0
    else:
        from pgio_tui.tui.live import run_monitor
        workload.start()
        try:
            rc = run_monitor(sampler, record_path=record, force=force, theme=theme, workload=workload)
        finally:
            end_workload(workload)
    _print_outcome(workload)
    return rc or (1 if workload.error and not workload.stop_requested else 0)


def _print_outcome(workload: Workload) -> None:
    if workload.error:
        say(f"{PROG}: {workload.kind}: {workload.error}")
    else:
        say(f"{PROG}: {workload.kind} {workload.outcome()}")
