"""Session: one sampling run — sampler, optional recorder, optional workload, frame consumers,
stop reason. Every command that samples (live, record, bench, demo; each run of an experiment) is
one Session with a driver: `pgio_tui.headless.run_headless` (a blocking loop in the main thread)
or `pgio_tui.tui.feed.LiveFeed` (a thread worker feeding the TUI).

The Session owns nothing global: signal handlers are installed by the headless driver for the
length of its loop and put back afterwards (`on_signals`), so many Sessions can be built, run and
closed in a row in one process. `frames()` runs on one thread (the driver's); everything another
thread may ask for (`stop`, `start_recording`, `annotate`, `attach_workload`) is queued and applied
at the next tick on that thread, which is also the thread the recorder's SQLite connection lives on.

Frames go, in order, to the recorder and then to every consumer in `consumers` (callables taking a
Frame, called on the loop's thread, after the frame is recorded). A Prometheus exporter is one more
consumer: `Session(sampler, consumers=[exporter.on_frame])`; a consumer that raises is dropped with a
warning notice, never stopping the recording.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pgio_tui.errors import PROG, CliError, ConnectError
from pgio_tui.frame import Event, Frame
from pgio_tui.interfaces import RecorderLike
from pgio_tui.interfaces import SamplerLike as Sampler
from pgio_tui.interfaces import WorkloadLike as Workload

STOP_GRACE_S = 15.0  # a workload asked to stop: how long it may take before it is killed
FrameConsumer = Callable[[Frame], object]
Notify = Callable[[str, str], object]  # (text, severity: information | warning | error)


def open_sampler(conninfo: str, interval: float = 1.0, devices: list[str] | None = None) -> Sampler:
    """An opened Sampler, or CliError saying why the server cannot be read."""
    from pgio_tui.sampler import Sampler, UnknownDevices
    from pgio_tui.sources.postgres import SourceError
    sampler = Sampler(conninfo, interval=interval, devices=devices)
    try:
        sampler.open()
    except UnknownDevices as exc:
        raise CliError(str(exc)) from None
    except SourceError as exc:
        raise ConnectError(f"cannot connect: {exc}") from None
    return sampler


class Session:
    """One sampling run on an opened sampler (the caller opens and closes the sampler)."""

    def __init__(self, sampler: Sampler, *, workload: Workload | None = None, duration: float | None = None,
                 consumers: list[FrameConsumer] | None = None, on_notice: Notify | None = None,
                 record_until_workload_ends: bool = False):
        self.sampler = sampler
        self.duration = duration
        self.consumers: list[FrameConsumer] = list(consumers or [])
        self.on_notice: Notify = on_notice or (lambda text, severity: None)
        self.workload: Workload | None = None
        self.recording: str | None = None  # the path while recording
        self.ticks = 0  # ticks written to the current (or last) recording
        self.record_error: Exception | None = None  # set when the recorder failed (and was closed)
        self._recorder: RecorderLike | None = None
        self._stop = threading.Event()
        self._stop_reason: str | None = None
        self._commands: queue.SimpleQueue = queue.SimpleQueue()
        self._source: Iterator[Frame] | None = None
        self._primed: Frame | None = None
        # bench's workload: its recording closes once the workload's end is in a frame
        self._end_recording_with = workload if record_until_workload_ends else None
        if workload is not None:
            self._attach(workload)

    # --- from any thread: never blocks ----------------------------------------------------------

    def stop(self, reason: str) -> None:
        """End the loop at once (the next tick is not taken); the first reason given is kept."""
        if self._stop_reason is None:
            self._stop_reason = reason
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def stop_reason(self) -> str | None:
        return self._stop_reason

    def start_recording(self, path: str, force: bool = False) -> None:
        """Start recording at the next tick (its folder is created); said through on_notice."""
        self._commands.put(("record", path, force))

    def stop_recording(self) -> None:
        self._commands.put(("stop_recording",))

    def annotate(self, text: str) -> None:
        """Recorded as an `annotation` event in the next frame (and drawn on every chart)."""
        self._commands.put(("annotate", text))

    def attach_workload(self, workload: Workload) -> None:
        """From the next tick on the workload is a tick source (its latency, start/stop events) and,
        when recording, its output goes into the file."""
        self._commands.put(("workload", workload))

    # --- on the loop's thread -------------------------------------------------------------------

    def record(self, path: str, force: bool = False, make_dirs: bool = False, rotation=None) -> None:
        """Open the recording now: metadata and settings snapshot. CliError when it cannot be.
        `make_dirs`: create the folder too (the live view's recordings/). `rotation`
        (store.rotation.Rotation): `path` is a folder that gets one recording per period."""
        from pgio_tui.secrets import command_line
        from pgio_tui.store.writer import Recorder, RecordingError
        if self._recorder is not None:
            raise CliError(f"already recording to {self.recording}")
        meta = {**self.sampler.meta(), "command_line": command_line(PROG)}
        rec: RecorderLike
        try:
            if rotation is not None:  # each of its files starts with the settings of then
                from pgio_tui.store.rotation import RotatingRecorder
                rec = RotatingRecorder(path, rotation, meta=meta, settings=self.sampler.settings_rows)
            else:
                if make_dirs:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                rec = one = Recorder(path, force=force, meta=meta)
                try:
                    one.set_settings(self.sampler.settings_rows())
                except (RecordingError, OSError) as exc:
                    _close_quietly(one, f"error: {exc}")
                    raise
        except (RecordingError, OSError) as exc:
            raise CliError(str(exc)) from None
        self._recorder, self.recording, self.ticks, self.record_error = rec, str(path), 0, None
        self._tell_workload(rec)

    def prime(self, first_gap: float | None = None) -> Frame | None:
        """Take the first tick now (before a UI exists, so its first paint has data); `frames()`
        records and hands it on first. `first_gap`: the second tick that soon after it (Sampler.frames)."""
        self._source = self.sampler.frames(self._stop, duration=self.duration, first_gap=first_gap)
        self._primed = next(self._source, None)
        return self._primed

    def frames(self) -> Iterator[Frame]:
        """The tick loop: each frame recorded, handed to the consumers, then yielded."""
        source = self._source or self.sampler.frames(self._stop, duration=self.duration)
        if self._primed is not None:
            first, self._primed = self._primed, None
            yield self._process(first)
        for frame in source:
            yield self._process(frame)

    def close(self, reason: str | None = None) -> str | None:
        """Close the recording (the workload's output and summary first, then a stop event with the
        stop reason) and detach the workload. Returns "recorded N ticks to PATH (reason)", or None."""
        why = reason or self._stop_reason or "stopped"
        path, ticks = self.recording, self.ticks
        self._close_recorder(why)
        w = self.workload
        if w is not None and w in self.sampler.tick_sources:
            self.sampler.tick_sources.remove(w)
        return f"recorded {ticks} ticks to {path} ({why})" if path else None

    def _process(self, frame: Frame) -> Frame:
        self._apply_commands(frame)
        self._write(frame)
        w = self._end_recording_with
        if w is not None and w.done and self._recorder is not None:
            self._end_recording_with = None
            self._close_recorder(f"{w.kind} ended")
        for consumer in list(self.consumers):
            try:
                consumer(frame)
            except Exception as exc:  # noqa: BLE001 - a consumer must not stop the sampling
                self.consumers.remove(consumer)
                self.on_notice(f"{getattr(consumer, '__qualname__', consumer)} stopped: {exc}", "warning")
        return frame

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
                    self.on_notice(f"already recording to {self.recording}", "warning")
                    continue
                try:
                    self.record(cmd[1], cmd[2], make_dirs=True)
                except CliError as exc:
                    self.on_notice(f"cannot record: {exc}", "error")
                else:
                    self.on_notice(f"recording to {cmd[1]}", "information")
            elif cmd[0] == "stop_recording":
                self._close_recorder("stopped from the live view")
            elif cmd[0] == "workload":
                self._attach(cmd[1])

    def _write(self, frame: Frame) -> None:
        if self._recorder is None:
            return
        from pgio_tui.store.writer import RecordingError
        try:
            self._recorder.write(frame)
            self.ticks += 1
        except (RecordingError, ValueError) as exc:
            self.record_error = exc
            self.on_notice(f"recording stopped: {exc}", "error")
            self._close_recorder(f"error: {exc}")

    def _close_recorder(self, reason: str) -> None:
        rec, path, ticks = self._recorder, self.recording, self.ticks
        if rec is None:
            return
        self._recorder, self.recording = None, None
        self._tell_workload(None)
        try:
            rec.close(reason)
        except Exception as exc:  # noqa: BLE001 - said, and the session goes on
            self.on_notice(f"closing {path}: {exc}", "error")
            return
        self.on_notice(f"recording saved: {path} ({ticks} ticks)", "information")

    def _attach(self, workload: Workload) -> None:
        old, sources = self.workload, self.sampler.tick_sources
        if old is not None and old.done:  # its stop is in a frame: let it go
            if self._recorder is not None:
                self._tell_workload(None)
            if old in sources:
                sources.remove(old)
        self.workload = workload
        if workload not in sources:
            sources.append(workload)
        if self._recorder is not None:
            self._tell_workload(self._recorder)

    def _tell_workload(self, recorder: RecorderLike | None) -> None:
        """The workload keeps its output in the recording: told, on this thread (the recorder's),
        when a recorder appears or goes away."""
        if self.workload is None:
            return
        try:
            self.workload.on_recorder(recorder)
        except Exception as exc:  # noqa: BLE001 - the recording goes on without the output
            self.on_notice(f"workload: {exc}", "warning")


def end_workload(workload: Workload | None, grace: float = STOP_GRACE_S, until_recorded: float = 0.0) -> None:
    """Stop a running workload and wait (bounded by `grace`, then kill) for its end; then up to
    `until_recorded` seconds for a tick to carry its stop (its workload_stop event and summary)."""
    if workload is None or not workload.running:
        return
    workload.stop()
    if not workload.wait(grace):
        workload.kill()
        workload.wait(5)
    deadline = time.monotonic() + until_recorded
    while not workload.done and time.monotonic() < deadline:
        time.sleep(0.05)


@contextlib.contextmanager
def on_signals(handler: Callable[[signal.Signals], object],
               signals: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
    """For the length of the block, `signals` call handler(signal) instead of killing us; the
    previous handlers are put back afterwards (nothing leaks into the next Session). Outside the
    main thread nothing is installed."""
    previous = {}
    for sig in signals:
        try:
            previous[sig] = signal.signal(sig, lambda signum, _f: handler(signal.Signals(signum)))
        except ValueError:  # not the main thread
            pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _close_quietly(recorder: RecorderLike, why: str) -> None:
    try:
        recorder.close(why)
    except Exception:  # noqa: BLE001 - already failing; the first error is the one to tell
        pass
