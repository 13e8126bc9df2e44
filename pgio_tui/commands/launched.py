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
                headless: bool = False, theme: str | None = None, keep_recording: bool = False,
                listen=None) -> int:
    """Start `workload`, show it live (or headless) until it ends or the user stops it; exit code.
    The caller has checked `record` against --force before connecting (commands.common.check_overwrite).
    The recording ends with the workload unless `keep_recording`. `listen`: the command's arguments
    when it serves /metrics too (`--listen`, `--tls-cert`/`--tls-key`, `--auth-file`; headless
    only), the workload's latency histogram with it."""
    if headless or not sys.stdout.isatty():
        from pgio_tui.commands.common import open_exporter
        exporter = open_exporter(listen, sampler) if listen is not None else None
        try:
            session = Session(sampler, workload=workload, consumers=[exporter.on_frame] if exporter else [])
            if record:
                session.record(record, force)
            run_headless(session, label=record or "not recorded", keep_recording=keep_recording)
        finally:
            if exporter is not None:
                exporter.close()
        rc = 0
        whole = False  # its output, report included, was printed as it came
    else:
        if listen is not None:
            from pgio_tui.errors import CliError
            raise CliError("--listen serves /metrics from a headless run: add --headless")
        from pgio_tui.tui.live import run_monitor
        workload.start()
        try:
            rc = run_monitor(sampler, record_path=record, force=force, theme=theme, workload=workload,
                             keep_recording=keep_recording)
        finally:
            end_workload(workload)
        whole = True  # the screen is gone: its report was only shown there
    _print_outcome(workload, whole)
    return rc or (1 if workload.error and not workload.stop_requested else 0)


def _print_outcome(workload: Workload, whole: bool = False) -> None:
    """The exit line (failures and early ends in it); with `whole`, the workload's own report first."""
    if whole:
        try:
            for line in workload.report_lines():
                print(line)
            sys.stdout.flush()
        except OSError:
            pass
    say(f"{PROG}: {workload.exit_line()}")
