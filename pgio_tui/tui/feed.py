"""LiveFeed: the sampler loop and the recorder, on one thread, handing Frames to the UI.

Textual-free: the UI gives two callbacks (the app's thread-safe `post_message` wrapped) and calls
the request methods below, which only put a command on a queue and return at once. Everything that
touches PostgreSQL or the disk (sampling, opening, writing and closing the recording) happens on the
feed's thread, so the UI thread never waits on either, and the SQLite connection stays on the thread
that created it.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pgio_tui.frame import Event, Frame
from pgio_tui.secrets import command_line


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """The feed's state as of a frame: what the header shows."""

    recording: str | None = None  # path while recording
    recorded_ticks: int = 0
    postmaster_start: float | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    text: str
    severity: str = "information"  # information | warning | error (Textual's notify severities)


class LiveFeed:
    """Runs `sampler.frames()` on the calling thread (a Textual thread worker) until stopped."""

    def __init__(self, sampler: Any, *, record_path: str | None = None, force: bool = False,
                 workload: Any = None, keep_recording: bool = False):
        self.sampler = sampler
        self.workload = workload
        # The session's workload (bench): its recording ends with it unless told to keep going.
        self._stop_with = workload if record_path and not keep_recording else None
        self._initial = (record_path, force) if record_path else None
        self._commands: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self._closed = threading.Event()
        self._started = threading.Event()
        self._ui_ready = threading.Event()
        self._stop_reason = "quit"
        self._recorder = None
        self._recording: str | None = None
        self._ticks = 0
        self._frames = None  # the sampler's generator, once primed
        self._first: Frame | None = None
        self.on_frame: Callable[[Frame, FeedStatus], object] = lambda f, s: None
        self.on_notice: Callable[[Notice], object] = lambda n: None

    # --- requests from the UI thread: never block ----------------------------------------------

    def start_recording(self, path: str, force: bool = False) -> None:
        self._commands.put(("record", path, force))

    def stop_recording(self) -> None:
        self._commands.put(("stop_recording",))

    def annotate(self, text: str) -> None:
        """Recorded as an `annotation` event in the next frame (and drawn on every chart)."""
        self._commands.put(("annotate", text))

    def attach_workload(self, workload: Any) -> None:
        """A workload launched from the UI: from the next tick on it is a tick source of the sampler
        (its latency, its start/stop events) and, when recording, its output goes into the file."""
        self._commands.put(("workload", workload))

    def stop(self, reason: str = "quit") -> None:
        """End the loop; `reason` goes into the recording's stop event."""
        if not self._stop.is_set():
            self._stop_reason = reason
        self._stop.set()
        self._ui_ready.set()

    def ui_ready(self) -> None:
        """The first frame is on screen: heavy set-up (the recorder's imports) may go ahead."""
        self._ui_ready.set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        """True once the loop has ended and the recording (if any) is closed."""
        return self._closed.wait(timeout)

    @property
    def recording(self) -> str | None:
        return self._recording

    @property
    def started(self) -> bool:
        return self._started.is_set()

    def prime(self) -> Frame | None:
        """Take the first tick now, on the caller's thread, before the UI exists, so that the first
        paint already shows data. run() records it and goes on with the same generator."""
        self._frames = self.sampler.frames(self._stop)
        self._first = next(self._frames, None)
        return self._first

    # --- the feed thread ------------------------------------------------------------------------

    def run(self) -> None:
        self._started.set()
        try:
            if self._initial:
                # Opening a recording imports sqlite-utils (and numpy, when installed): ~0.3 s of
                # CPU that would slow the first paint. Wait for it, within the tick's slack.
                self._ui_ready.wait(min(1.0, 0.8 * float(getattr(self.sampler, "interval", 1.0))))
                self._open_recorder(*self._initial)
            frames = self._frames if self._frames is not None else self.sampler.frames(self._stop)
            if self._first is not None:  # already shown: only recorded here
                self._write(self._first)
            for frame in frames:
                self._apply_commands(frame)
                self._write(frame)
                self._end_with_workload()
                self.on_frame(frame, self._status())
        except Exception as exc:  # the UI must hear about it; the thread must not die silently
            line = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self.on_notice(Notice(f"sampling stopped: {line}", "error"))
            self._debug_log(traceback.format_exc())
        finally:
            self._close_recorder(self._stop_reason if self._stop.is_set() else "sampling stopped")
            self._closed.set()

    def _end_with_workload(self) -> None:
        """The bench workload's end is in the file now: close the recording with it."""
        w = self._stop_with
        if w is not None and getattr(w, "done", False) and self._recorder is not None:
            self._stop_with = None
            self._close_recorder(f"{getattr(w, 'kind', 'workload')} ended")

    def _status(self) -> FeedStatus:
        return FeedStatus(self._recording, self._ticks, getattr(self.sampler, "postmaster_start", None))

    def _apply_commands(self, frame: Frame) -> None:
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            if cmd[0] == "annotate":
                frame.events.append(Event("annotation", cmd[1]))
            elif cmd[0] == "record":
                if self._recorder is not None:
                    self.on_notice(Notice(f"already recording to {self._recording}", "warning"))
                else:
                    self._open_recorder(cmd[1], cmd[2])
            elif cmd[0] == "stop_recording":
                self._close_recorder("stopped from the live view")
            elif cmd[0] == "workload":
                self._attach(cmd[1])

    def _open_recorder(self, path: str, force: bool) -> None:
        from pgio_tui.store.writer import Recorder, RecordingError
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            rec = Recorder(path, force=force, meta={**self.sampler.meta(), "command_line": command_line()})
            rec.set_settings(self.sampler.settings_rows())
        except (RecordingError, OSError) as exc:
            self.on_notice(Notice(f"cannot record: {exc}", "error"))
            return
        self._recorder, self._recording, self._ticks = rec, str(path), 0
        self._tell_workload(rec)
        self.on_notice(Notice(f"recording to {path}"))

    def _write(self, frame: Frame) -> None:
        if self._recorder is None:
            return
        from pgio_tui.store.writer import RecordingError
        try:
            self._recorder.write(frame)
            self._ticks += 1
        except (RecordingError, ValueError) as exc:
            self.on_notice(Notice(f"recording stopped: {exc}", "error"))
            self._close_recorder(f"error: {exc}")

    def _close_recorder(self, reason: str) -> None:
        rec, path, ticks = self._recorder, self._recording, self._ticks
        if rec is None:
            return
        self._recorder, self._recording = None, None
        self._tell_workload(None)
        try:
            rec.close(reason)
        except Exception as exc:
            self.on_notice(Notice(f"closing {path}: {exc}", "error"))
            return
        self.on_notice(Notice(f"recording saved: {path} ({ticks} ticks)"))

    def _attach(self, workload: Any) -> None:
        old, sources = self.workload, self.sampler.tick_sources
        if old is not None and getattr(old, "done", True):  # its stop is in a frame: let it go
            if self._recorder is not None:
                self._tell_workload(None)
            if old in sources:
                sources.remove(old)
        self.workload = workload
        if workload not in sources:
            sources.append(workload)
        if self._recorder is not None:
            self._tell_workload(self._recorder)

    def _tell_workload(self, recorder: Any) -> None:
        """A launched workload may keep its output in the recording: it is told, on this thread
        (the recorder's), when a recorder appears or goes away. Optional on the workload's side."""
        hook = getattr(self.workload, "on_recorder", None)
        if callable(hook):
            try:
                hook(recorder)
            except Exception as exc:
                self.on_notice(Notice(f"workload: {exc}", "warning"))

    @staticmethod
    def _debug_log(text: str) -> None:
        import os
        path = os.environ.get("PGIO_TUI_DEBUG_LOG")
        if path:
            with open(path, "a") as fh:
                fh.write(time.strftime("%H:%M:%S ") + text + "\n")
