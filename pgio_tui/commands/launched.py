"""Run a launched workload under the sampler: in the live TUI, or headless with a status line.

Headless (`--headless`, or stdout is not a terminal) is `pgio-tui record` plus a workload: the
sampler and the recorder run in the main thread, the workload's output is printed as it comes,
and Ctrl-C, SIGTERM or SIGHUP stop the workload, wait for its end (its summary goes into the
recording) and close the file cleanly. A second signal, or a workload that does not end within
STOP_GRACE_S, cuts it short.
"""

from __future__ import annotations

import signal
import sys
import threading
import time

from pgio_tui.commands.common import check_overwrite
from pgio_tui.errors import PROG, CliError
from pgio_tui.errors import say as _say
from pgio_tui.session import STOP_GRACE_S, StatusLine, end_workload, open_recorder, stop_on_signals
from pgio_tui.session import close_quietly as _close_quietly
from pgio_tui.workloads.base import Workload


def run_session(sampler, workload: Workload, *, record: str | None = None, force: bool = False,
                headless: bool = False, theme: str | None = None) -> int:
    """Start `workload`, show it live (or headless) until it ends or the user stops it; exit code."""
    check_overwrite(record, force)
    sampler.tick_sources.append(workload)
    if headless or not sys.stdout.isatty():
        return _headless(sampler, workload, record, force)
    from pgio_tui.tui.app import run_monitor
    workload.start()
    try:
        rc = run_monitor(sampler, record_path=record, force=force, theme=theme, workload=workload)
    finally:
        end_workload(workload)
    _print_outcome(workload)
    return rc or (1 if workload.error and not workload.stop_requested else 0)


def _headless(sampler, workload: Workload, record: str | None, force: bool) -> int:
    stop = threading.Event()
    reason = {"why": "workload ended"}
    stop_on_signals(stop, reason)
    recorder = open_recorder(record, force, sampler) if record else None
    if recorder is not None:
        workload.on_recorder(recorder)
    status = StatusLine()
    printer = _Printer(workload, status)
    end = threading.Event()  # the sampler's own stop: we end after the workload's last tick
    stopping_since: float | None = None
    ticks = 0
    workload.start()
    try:
        for frame in sampler.frames(end):
            if recorder is not None:
                recorder.write(frame)
            ticks += 1
            printer.show_status(frame, record or "not recorded")
            if workload.done:
                break
            if stop.is_set() and stopping_since is None:  # first signal: stop the workload, keep ticking
                stopping_since = time.monotonic()
                stop.clear()
                workload.stop()
            elif stopping_since is not None and (stop.is_set() or time.monotonic() - stopping_since > STOP_GRACE_S):
                reason["why"] += "; workload cut short"
                end_workload(workload, grace=0)
                break
    except Exception as exc:
        end_workload(workload)
        printer.close()
        status.done()
        if recorder is not None:
            workload.on_recorder(None)
            _close_quietly(recorder, f"error: {exc}")
        kept = f"; the ticks so far are kept in {record}" if record else ""
        raise CliError(f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}{kept}") from None
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    end_workload(workload)
    printer.close()
    status.done()
    if recorder is not None:
        workload.on_recorder(None)
        recorder.close(reason["why"])
        _say(f"{PROG}: recorded {ticks} ticks to {record}")
    _print_outcome(workload)
    return 1 if workload.error and not workload.stop_requested else 0


def _print_outcome(workload: Workload) -> None:
    if workload.error:
        _say(f"{PROG}: {workload.kind}: {workload.error}")
    else:
        _say(f"{PROG}: {workload.kind} {workload.outcome()}")


class _Printer:
    """Prints the workload's output as it comes (a thread polling 10 times a second), above the
    status line; stdout may be a pipe or gone (ssh dropped), the recording goes on regardless."""

    POLL_S = 0.1

    def __init__(self, workload: Workload, status: StatusLine):
        self.workload = workload
        self.status = status
        self.lock = threading.Lock()  # one writer at a time: these lines or the status line
        self._cursor = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="workload-output", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.POLL_S):
            self.flush()

    def show_status(self, frame, label: str) -> None:
        with self.lock:
            self.status.show(frame, label)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.flush()

    def flush(self) -> None:
        with self.lock:
            self._cursor, lines = self.workload.read_output(self._cursor)
            if not lines:
                return
            try:
                if self.status.enabled and self.status.tty:
                    sys.stderr.write("\r\x1b[2K")
                    sys.stderr.flush()
                for _t, _stream, line in lines:
                    print(line)
                sys.stdout.flush()
            except OSError:
                pass
