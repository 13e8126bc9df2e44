"""The headless driver of a Session: a blocking loop in the main thread with a status line.

`pgio-tui record`, and `bench`/`demo` with --headless (or when stdout is not a terminal). Ctrl-C,
SIGTERM and SIGHUP end it cleanly: without a workload at once; with one, the first signal stops the
workload and the loop goes on until its end is in a frame (its summary goes into the recording);
a second signal, or a workload that does not end within STOP_GRACE_S, cuts it short.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.errors import CliError, say
from pgio_tui.format import fit_fields
from pgio_tui.frame import Frame
from pgio_tui.session import STOP_GRACE_S, Session, end_workload, on_signals


def run_headless(session: Session, *, label: str, quiet: bool = False, keep_recording: bool = False,
                 status: StatusLine | None = None, show_output: bool = True) -> str:
    """Run `session` until it ends (duration, signal, workload end unless `keep_recording`: then
    until a signal); returns the stop reason. The
    recording is closed (its tail written) whatever happens; a failing recorder is a CliError that
    says the ticks so far are kept. `status`: another status line (an experiment's progress bar);
    `show_output` False: the workload's output only goes into the recording."""
    status = status if status is not None else StatusLine(enabled=not quiet)
    workload = session.workload
    printer = OutputPrinter(workload, status) if workload is not None and show_output else None
    signals: list[str] = []

    def on_signal(sig) -> None:
        why = f"signal {sig.name}"
        signals.append(why)
        if workload is None:
            session.stop(why)

    with on_signals(on_signal):  # until the file is closed: a late Ctrl-C must not cut its tail
        try:
            _loop(session, workload, label, printer or status, signals, keep_recording)
        except Exception as exc:
            end_workload(workload)
            _finish(printer, status)
            kept = f"; the ticks so far are kept in {session.recording}" if session.recording else ""
            if session.record_error is exc:
                kept = "; the ticks recorded before it are kept"
            session.close(f"error: {exc}")
            raise CliError(f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}{kept}") from None
        end_workload(workload)
        _finish(printer, status)
        tail = session.close()
    if tail:
        say(f"pgio-tui: {tail}")
    return session.stop_reason or "stopped"


def _loop(session: Session, workload, label: str, shown, signals: list[str], keep_recording: bool = False) -> None:
    """Tick until the session stops; with a workload: the first signal stops the workload and
    ticking goes on until its end is in a frame; a second one, or STOP_GRACE_S, cuts it short."""
    stopping_since: float | None = None
    if workload is not None:
        session.prime()  # the first tick before the workload: its counters are the run's baseline (a
        workload.start()  # workload done within a tick would otherwise leave a recording of one tick after it)
    for frame in session.frames():
        shown.show_status(frame, label)
        if session.record_error is not None:
            raise session.record_error
        if workload is None:
            continue
        if workload.done:
            if not keep_recording:
                session.stop("workload ended")
            elif signals:  # --keep-recording: until the user stops it
                session.stop(signals[-1])
        elif signals and stopping_since is None:
            stopping_since = time.monotonic()
            workload.stop()
        elif stopping_since is not None and (len(signals) > 1 or time.monotonic() - stopping_since > STOP_GRACE_S):
            session.stop("workload ended; workload cut short")
            end_workload(workload, grace=0)
        if session.stopped:
            return
    session.stop("duration reached" if session.duration else "stopped")


def _finish(printer: OutputPrinter | None, status: StatusLine) -> None:
    if printer is not None:
        printer.close()
    status.done()


class StatusLine:
    """A compact one-line status: redrawn in place on a terminal, one line every 10 s otherwise."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def show(self, frame: Frame, path: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty and now - self._last < 10:
            return
        self._last = now
        v = frame.values

        def f(name, fmt="{:.0f}"):
            x = v.get(name)
            return "-" if x is None else fmt.format(x)

        ck = "ckpt " + (f"{v.get(M.CHECKPOINT_KIND) or ''} {f(M.CHECKPOINT_PROGRESS, '{:.0%}')}"
                        if v.get(M.CHECKPOINT_ACTIVE) else "idle")
        fields = [f"{time.strftime('%H:%M:%S', time.localtime(frame.t))} tick {frame.tick}", ck,
                  f"wr ckpt/bgw/be {f(M.WRITES_CHECKPOINTER)}/{f(M.WRITES_BGWRITER)}/{f(M.WRITES_BACKEND)}",
                  f"dirty {fmt.kib(frame.number(M.MEM_DIRTY_KB))}", f"tps {f(M.LATENCY_TPS)}", path]
        try:
            if self.tty:  # fields that do not fit are left out whole: no number loses digits
                sys.stderr.write("\r\x1b[2K" + fit_fields(fields, os.get_terminal_size(2).columns - 1, " | "))
            else:
                sys.stderr.write(" | ".join(fields) + "\n")
            sys.stderr.flush()
        except OSError:
            self.enabled = False

    show_status = show

    def done(self) -> None:
        if self.enabled and self.tty:
            try:
                sys.stderr.write("\n")
            except OSError:
                pass


class OutputPrinter:
    """Prints the workload's output as it comes (a thread polling 10 times a second), above the
    status line; stdout may be a pipe or gone (ssh dropped), the recording goes on regardless."""

    POLL_S = 0.1

    def __init__(self, workload, status: StatusLine):
        self.workload = workload
        self.status = status
        self.setup = SetupBar(workload.setup_label or f"{workload.kind} set-up", status.enabled)
        self.lock = threading.Lock()  # one writer at a time: these lines or the status line
        self._cursor = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="workload-output", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.POLL_S):
            self.flush()

    def show_status(self, frame: Frame, label: str) -> None:
        with self.lock:
            if not self.setup.active:  # during the set-up its bar is the line shown
                self.status.show(frame, label)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.flush()

    def flush(self) -> None:
        with self.lock:
            self._cursor, lines = self.workload.read_output(self._cursor)
            lines = [x for x in lines if not self.workload.is_progress_line(x[2])]  # the set-up bar says it
            try:
                if lines:
                    if self.status.enabled and self.status.tty:
                        sys.stderr.write("\r\x1b[2K")
                        sys.stderr.flush()
                    for _t, _stream, line in lines:
                        print(line)
                    sys.stdout.flush()
                if self.workload.phase == "setup":
                    self.setup.update(self.workload.progress)
                elif self.setup.active:
                    self.setup.done(complete=self.workload.error is None)
            except OSError:
                pass


BAR = 20  # characters of a headless progress bar


def bar(fraction: float, width: int = BAR) -> str:
    fraction = max(0.0, min(1.0, fraction))
    full = int(fraction * width)
    return "[" + "#" * full + "-" * (width - full) + f"] {int(fraction * 100):3d}%"


class SetupBar:
    """A long set-up step (a lab's initdb, pgbench -i, pgio's tables) as a bar instead of raw lines:
    one line redrawn in place on a terminal, a plain line per tenth otherwise (a log stays short)."""

    def __init__(self, label: str, enabled: bool = True, stream=None):
        self.label = label
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self._tenths = -1
        self.active = False

    def update(self, fraction: float | None, what: str = "") -> None:
        if not self.enabled or fraction is None:
            return
        self.active = True
        elapsed = time.monotonic() - self.t0
        try:
            if self.tty:
                text = f"{self.label} {bar(fraction)} {elapsed:.0f} s{' · ' + what if what else ''}"
                self.stream.write("\r\x1b[2K" + text[: _columns(self.stream) - 1])
            elif int(fraction * 10) > self._tenths:
                self._tenths = int(fraction * 10)
                self.stream.write(f"{self.label}: {self._tenths * 10} % ({elapsed:.0f} s){' ' + what if what else ''}\n")
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False

    def clear(self) -> None:
        """Wipe the bar (on a terminal) before another line is printed."""
        if self.enabled and self.tty and self.active:
            try:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            except (OSError, ValueError):
                self.enabled = False

    def done(self, complete: bool = True) -> None:
        """The step ended: its last state stays as one line (100 % when it completed)."""
        if self.active and complete and self._tenths < 10:
            self.update(1.0)
        if self.enabled and self.tty and self.active:
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self.active = False


def _columns(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80
