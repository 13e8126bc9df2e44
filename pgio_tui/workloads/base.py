"""What every launched workload shares: lifecycle, output capture, tick events, recording.

A workload runs in its own threads (and processes); the sampler thread calls `sample(frame)` once
per tick and, when a recorder was handed over with `on_recorder()` (on that same thread: the one
that writes the frames), copies the command, output and summary into the file; a UI reads
`phase`, `progress`, `output_tail()` and `summary`. Output is kept whole (up to a cap
far above any run's) so each reader drains it at its own pace and nothing is lost.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from pgio_tui.frame import Event, Frame
from pgio_tui.interfaces import RecorderLike

OUTPUT_CAP = 200_000  # lines kept in memory; older ones are dropped only once read by a recorder


class WorkloadError(Exception):
    """The workload cannot run; the message is one line saying what to do."""


# A workload's error that says it never reached the server (libpq's words, from pgbench or psycopg):
# every later run against the same conninfo would fail the same way.
_NO_CONNECTION = re.compile(
    r"connection to server .* failed|could not connect to server|could not translate host name|"
    r'database "[^"]*" does not exist|role "[^"]*" does not exist|password authentication failed|'
    r"no password supplied|no pg_hba\.conf entry|could not create connection")


def connection_failed(message: str | None) -> bool:
    """Did a workload fail because it could not connect (not because of what it ran)?"""
    return message is not None and _NO_CONNECTION.search(message) is not None


class OutputLog:
    """Append-only list of (t, stream, line), read by cursor so several consumers can drain it."""

    def __init__(self, cap: int = OUTPUT_CAP):
        self._lines: list[tuple[float, str, str]] = []
        self._base = 0  # cursor of _lines[0]
        self._cap = cap
        self._lock = threading.Lock()

    def append(self, stream: str, line: str, t: float | None = None) -> None:
        with self._lock:
            self._lines.append((t or time.time(), stream, line))
            if len(self._lines) > self._cap:
                drop = len(self._lines) - self._cap
                del self._lines[:drop]
                self._base += drop

    def read(self, cursor: int = 0) -> tuple[int, list[tuple[float, str, str]]]:
        """Lines from cursor on, and the cursor to pass next time."""
        with self._lock:
            start = max(0, cursor - self._base)
            lines = self._lines[start:]
            return self._base + len(self._lines), lines

    def tail(self, n: int) -> list[str]:
        with self._lock:
            return [line for _, _, line in self._lines[-n:]] if n > 0 else []


class Workload:
    """Base class; subclasses set `kind` and implement `_run()` (in a thread) and `_request_stop()`.

    Public surface, shared with the TUI: kind, argv, params, running, phase, progress, start(),
    stop(), wait(timeout), output_tail(n), read_output(cursor), summary, exit_code, error,
    sample(frame).
    """

    kind = "workload"

    @property
    def setup_label(self) -> str:
        """Its set-up step on a headless progress bar ("pgbench -i -s 100"); "" for "<kind> set-up"."""
        return ""

    def __init__(self, argv: list[str], params: dict[str, Any]):
        self.argv = list(argv)
        self.params = dict(params)
        self.summary: dict[str, Any] | None = None
        self.exit_code: int | None = None
        self.error: str | None = None  # one line when the workload failed
        self.phase = "idle"  # idle, setup (init for pgbench), run, stopping, done
        self.progress: float | None = None  # 0-1 of the current phase when known
        self.started_t: float | None = None
        self.stopped_t: float | None = None
        self.output = OutputLog()
        self._events: list[Event] = []
        self._events_lock = threading.Lock()
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._stop_reported = False
        self._thread: threading.Thread | None = None
        self._tap: WorkloadTap | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a workload starts once")
        self.started_t = time.time()
        self.phase = "setup"
        self.event("workload_start", f"{self.kind} started: {self.describe()}",
                   {"kind": self.kind, "argv": self.argv, "params": self.params})
        self._thread = threading.Thread(target=self._main, name=f"{self.kind}-workload", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self._run()
        except WorkloadError as exc:
            self.fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must still end the workload and be shown
            self.fail(f"{type(exc).__name__}: {exc}")
        finally:
            self.stopped_t = time.time()
            if self.exit_code is None:
                self.exit_code = 1 if self.error else 0
            self.phase = "done"
            self._finished.set()

    def stop(self) -> None:
        """Ask the workload to stop now; returns at once (wait() for the end)."""
        if self._finished.is_set() or self._stop.is_set():
            return
        self._stop.set()
        if self.phase != "idle":
            self.phase = "stopping"
        self.emit("note", "stopping (requested)")
        self._request_stop()

    def kill(self) -> None:
        """Last resort when a stopped workload does not end: a process is killed (threads cannot be)."""

    def is_progress_line(self, line: str) -> bool:
        """A line that only says how far its set-up is: headless draws `progress` as a bar instead."""
        return False

    def wait(self, timeout: float | None = None) -> bool:
        """True once the workload has ended (its summary is then final)."""
        return self._finished.wait(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._finished.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def done(self) -> bool:
        """Finished, and its stop already went into a frame: a session loop may end now."""
        return self._stop_reported

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    # -- output ---------------------------------------------------------------------------------

    def emit(self, stream: str, line: str) -> None:
        """One line of output: stdout/stderr of a program, or `note` for our own messages."""
        self.output.append(stream, line.rstrip("\n"))

    def output_tail(self, n: int = 20) -> list[str]:
        return self.output.tail(n)

    def read_output(self, cursor: int = 0) -> tuple[int, list[tuple[float, str, str]]]:
        return self.output.read(cursor)

    def fail(self, message: str) -> None:
        if self.error is None:
            self.error = message
        self.emit("note", f"error: {message}")

    # -- ticks ----------------------------------------------------------------------------------

    def event(self, kind: str, text: str, data: dict[str, Any] | None = None) -> None:
        data = dict(data or {})
        if kind == "note":  # the workload's progress, not a degradation (workload_facts.workload_progress)
            data.setdefault("workload", self.kind)
        with self._events_lock:
            self._events.append(Event(kind, text, data))

    def sample(self, frame: Frame) -> None:
        """Tick source: the workload's figures and events for this tick; after its end, nothing
        (the server's own latency view comes back)."""
        if not self._stop_reported:
            finished = self._finished.is_set()  # read first: all measured before the end is then in
            self._tick_values(frame, finished)
            if finished:
                self.event("workload_stop", f"{self.kind} ended: {self.outcome()}",
                           {"kind": self.kind, "exit_code": self.exit_code, "error": self.error})
                self._stop_reported = True
            with self._events_lock:
                frame.events.extend(self._events)
                self._events.clear()
        if self._tap is not None:
            try:
                self._tap.pump()
            except Exception as exc:  # noqa: BLE001 - the recording's failure must not stop the sampling
                self._tap = None
                frame.events.append(Event("error", f"{self.kind} output no longer recorded: {exc}"))

    def on_recorder(self, recorder: RecorderLike | None) -> None:
        """A recorder appeared (or went away: None), on the thread that writes frames."""
        if self._tap is not None:
            self._tap.finish()
            self._tap = None
        if recorder is not None:
            self._tap = WorkloadTap(recorder, self)
            self._tap.pump()

    def _tick_values(self, frame: Frame, finished: bool) -> None:
        """Subclasses put their per-tick values into frame.values."""

    def partial_summary(self) -> dict[str, Any] | None:
        """Figures so far, for a recording that ends while the workload still runs."""
        return None

    def outcome(self) -> str:
        if self.error:
            return f"failed: {self.error}"
        return "stopped" if self._stop.is_set() else "finished"

    def describe(self) -> str:
        import shlex
        return shlex.join(self.argv)

    def report_lines(self) -> list[str]:
        """The workload's own end-of-run report, whole (pgbench's summary, pgio's report)."""
        return []

    def exit_line(self) -> str:
        """One line for the end of a run: what it did, how it ended (exit status, 130 = ended
        early), and what failed inside it (pgbench failed transactions, pgio deadlocks)."""
        from pgio_tui.workload_facts import workload_failures, workload_outcome
        if self.error:  # the error already says how it ended
            failures = workload_failures(self.summary)
            return f"{self.kind}: {self.error}" + (f" ({', '.join(failures)})" if failures else "")
        return f"{self.kind} {self.outcome()} ({workload_outcome({'exit_code': self.exit_code, 'summary': self.summary})})"

    # -- for subclasses -------------------------------------------------------------------------

    def _run(self) -> None:
        raise NotImplementedError

    def _request_stop(self) -> None:
        """Make the running phase end now (signal a process, cancel statements)."""


class WorkloadTap:
    """Copies a workload's command, output and summary into a Recorder, from the recording thread.

    Workload.on_recorder() makes one; the workload pumps it every tick; finish() before the
    recorder closes (on_recorder(None)) writes what is left.
    """

    def __init__(self, recorder: RecorderLike, workload: Workload):
        self.recorder = recorder
        self.workload = workload
        self.id: int | None = None
        self._cursor = 0
        self._stopped = False

    def pump(self) -> None:
        w = self.workload
        if w.started_t is None:
            return
        if self.id is None:
            self.id = self.recorder.workload_start(w.kind, w.argv, w.params, t=w.started_t)
        self._cursor, lines = w.read_output(self._cursor)
        for t, stream, line in lines:
            self.recorder.workload_output(self.id, stream, line, t)
        if w.finished and not self._stopped:
            self._stopped = True
            self.recorder.workload_stop(self.id, w.exit_code, w.summary, t=w.stopped_t)

    def finish(self) -> None:
        """The last output, and the stop row even when the workload did not end (the recording
        closed first: then its figures so far, marked partial, and no exit code)."""
        self.pump()
        if self.id is not None and not self._stopped:
            self._stopped = True
            self.recorder.workload_stop(self.id, None, self.workload.partial_summary(), t=time.time())
