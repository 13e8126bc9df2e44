"""A terminal driver whose input thread sleeps until there is input, and that says when what was
drawn has reached the terminal.

Textual's Linux driver polls the terminal ten times a second (`select(0.1)`) so that it notices its
exit and times out a lone Esc. On an idle screen that is the app's whole CPU: about 0.1–0.15 % of a
core, a tenth of what the monitor costs at 1 Hz (`bench/tui_cpu.py` prints CPU by thread). This
driver blocks until the terminal has input, the key parser's Esc timeout is due, or the driver stops
(a pipe wakes it), so the thread wakes only when there is something to do. An app uses it
through the package's QuietInput, when the fast path is on.

Textual writes to the terminal from a thread of its own: a frame is queued, and written when that
thread next holds the interpreter. `after_written(callback)` runs a callback there once what was
queued before it is written and flushed, so work that would compete with the writer (the live
command's connection: psycopg's import, a tenth of a second of CPU) can wait for the first frame
to be on screen, not just composed.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from collections.abc import Callable

from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver


class _WakingEvent(threading.Event):
    """The driver's exit event; setting it also wakes the input thread's select."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self._wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        try:
            os.write(self._wake_fd, b"x")
        except OSError:  # the pipe is full (already woken) or closed
            pass


class _AfterWritten:
    """Queued to the writer thread like a text: the writes before it are flushed, then `callback` runs."""

    def __init__(self, callback: Callable[[], object]):
        self.callback = callback


class _Terminal:
    """The terminal's file as the writer thread uses it: texts go to the file; an _AfterWritten
    flushes it and runs its callback (never raising: the writer thread must live on)."""

    def __init__(self, file) -> None:
        self._file = file
        self.flush, self.fileno = file.flush, file.fileno

    def write(self, text) -> int:
        if type(text) is not _AfterWritten:
            return self._file.write(text)
        try:
            self._file.flush()
            text.callback()
        except Exception:  # noqa: BLE001  a terminal gone, a callback's bug: the writes go on
            pass
        return 0

    def __getattr__(self, name: str):
        return getattr(self._file, name)


class QuietDriver(LinuxDriver):
    """Textual's LinuxDriver; its input loop differs (no wake-ups without input), and it can say
    when what was written has reached the terminal (`after_written`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._file = _Terminal(self._file)  # what Textual's writer thread is given
        self._wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        self._wake_w = wake_w
        self.exit_event = _WakingEvent(wake_w)

    def run_input_thread(self) -> None:
        """As Textual's loop, but select() waits for input, the parser's timeout, or the exit pipe."""
        selector = selectors.DefaultSelector()
        selector.register(self.fileno, selectors.EVENT_READ, "tty")
        selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(events: list, final: bool = False) -> None:
            for key, _mask in events:
                if key.data == "wake":
                    os.read(self._wake_r, 64)
                    continue
                data = decode(os.read(self.fileno, 1024 * 4), final=final)
                if not data:  # end of input (stdin piped): stop watching it rather than spin
                    selector.unregister(self.fileno)
                    continue
                for event in parser.feed(data):
                    self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        # A pending Esc: wake when the parser may time it out. A Textual whose parser keeps its
        # deadline elsewhere gets Textual's own 0.1 s poll rather than a missed Esc.
        knows_due = hasattr(parser, "_timeout_time")
        try:
            while not self.exit_event.is_set():
                due = parser._timeout_time if knows_due else get_time() + 0.1
                process(selector.select(None if due is None else max(0.0, due - get_time())))
            if self.fileno in selector.get_map():
                selector.unregister(self.fileno)
            process(selector.select(0), final=True)
        finally:
            selector.close()

    def after_written(self, callback: Callable[[], object]) -> None:
        """Run `callback` on the writer thread once everything written so far is on the terminal
        (at once when there is no writer thread: not in application mode)."""
        writer = self._writer_thread
        if writer is None:
            callback()
        else:
            writer.write(_AfterWritten(callback))

    def close(self) -> None:
        super().close()
        self.exit_event._wake_fd = -1  # a later set() must not write to a reused descriptor
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass


def misfit() -> str | None:
    """The private part of Textual the driver leans on that is not as it expects, None: all is."""
    if not callable(getattr(LinuxDriver, "run_input_thread", None)):
        return "LinuxDriver.run_input_thread"
    if not callable(getattr(XTermParser, "tick", None)):
        return "XTermParser.tick"
    if "_file" not in LinuxDriver.__init__.__code__.co_names:
        return "LinuxDriver._file"  # the file the writer thread is given, wrapped by _Terminal
    return None
