"""LiveFeed: the thread driver of a Session, handing its Frames to the UI.

Textual-free: the UI gives two callbacks (the app's thread-safe `post_message` wrapped) and calls
the request methods, which only queue a command on the Session and return at once. Everything that
touches PostgreSQL or the disk (sampling, opening, writing and closing the recording) happens on the
feed's thread, so the UI thread never waits on either, and the SQLite connection stays on the thread
that created it. The loop itself, the recording and its tail are the Session's (pgio_tui/session.py).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from pgio_tui.errors import CliError
from pgio_tui.frame import Frame
from pgio_tui.session import FrameConsumer, Session
from pgio_tui.tui.sources import ANNOTATE, LAUNCH, RECORD, FrameSink
from pgio_tui.interfaces import SamplerLike, WorkloadLike

# The live view's second tick this soon after its first: rates on screen at once. Over 0.25 s a
# rate is a rate (its dt is the real interval), only noisier than over the interval (the header
# says what it spans: widgets/status.py).
EARLY_TICK_S = 0.25
# A Connecting source that waits for the monitor's first paint waits no longer than this: a UI that
# never paints must not hold the connection (and a --record file) back for ever. On a loaded machine
# the paint can take 2 s; connecting then would only slow it down more.
PAINT_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """The feed's state as of a frame: what the header shows."""

    recording: str | None = None  # path while recording
    recorded_ticks: int = 0
    postmaster_start: float | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """A message for the user from the feed, shown as a Textual notification."""

    text: str
    severity: str = "information"  # information | warning | error (Textual's notify severities)


class LiveFeed:
    """The live FrameSource (tui/sources.py): `run()` drives a Session on the calling thread (a
    Textual thread worker) until stopped. It can record, annotate and take a workload."""

    abilities = frozenset({RECORD, ANNOTATE, LAUNCH})

    def __init__(self, sampler: SamplerLike, *, record_path: str | None = None, force: bool = False,
                 workload: WorkloadLike | None = None, consumers: list[FrameConsumer] | None = None,
                 keep_recording: bool = False):
        self.session = Session(sampler, workload=workload, consumers=consumers,
                               on_notice=lambda text, sev: self.on_notice(Notice(text, sev)),
                               record_until_workload_ends=workload is not None and not keep_recording)
        self._initial = (record_path, force) if record_path else None
        self._closed = threading.Event()
        self._started = threading.Event()
        self._ui_ready = threading.Event()
        self._first: Frame | None = None
        self.on_frame: Callable[[Frame, FeedStatus], object] = lambda f, s: None
        self.on_notice: Callable[[Notice], object] = lambda n: None

    @property
    def sampler(self) -> SamplerLike:
        return self.session.sampler

    @property
    def workload(self) -> WorkloadLike | None:
        return self.session.workload

    # --- FrameSource ----------------------------------------------------------------------------

    def attach(self, sink: FrameSink) -> None:
        """Frames and notices go to the app; the loop runs on one of the app's threads."""
        self.on_frame = sink.deliver
        self.on_notice = sink.tell
        sink.run_in_thread(self.run, "sampler")

    def detach(self, reason: str = "quit") -> None:
        self.stop(reason)

    # --- requests from the UI thread: never block ----------------------------------------------

    def start_recording(self, path: str, force: bool = False) -> None:
        self.session.start_recording(path, force)

    def stop_recording(self) -> None:
        self.session.stop_recording()

    def annotate(self, text: str) -> None:
        self.session.annotate(text)

    def attach_workload(self, workload: WorkloadLike) -> None:
        self.session.attach_workload(workload)

    def stop(self, reason: str = "quit") -> None:
        """End the loop; `reason` goes into the recording's stop event."""
        self.session.stop(reason)
        self._ui_ready.set()

    def ui_painted(self) -> None:
        """Nothing to wait for: a LiveFeed is already connected (Connecting's waits on it)."""

    def ui_ready(self) -> None:
        """The first frame is on screen: heavy set-up (the recorder's imports) may go ahead."""
        self._ui_ready.set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        """True once the loop has ended and the recording (if any) is closed."""
        return self._closed.wait(timeout)

    @property
    def recording(self) -> str | None:
        return self.session.recording

    @property
    def started(self) -> bool:
        return self._started.is_set()

    def prime(self, first_gap: float | None = None) -> Frame | None:
        """Take the first tick now, on the caller's thread, before the UI exists, so that the first
        paint already shows data. run() records it and goes on with the same loop (its second tick
        `first_gap` seconds after this one at the soonest: Sampler.frames)."""
        self._first = self.session.prime(first_gap)
        return self._first

    # --- the feed thread ------------------------------------------------------------------------

    def run(self) -> None:
        self._started.set()
        session = self.session
        try:
            if self._initial:
                # Opening a recording imports sqlite-utils (and numpy, when installed): ~0.3 s of
                # CPU that would slow the first paint. Wait for it, within the tick's slack.
                self._ui_ready.wait(min(1.0, 0.8 * float(session.sampler.interval)))
                self._open_initial(*self._initial)
            for frame in session.frames():
                if frame is not self._first:  # the primed frame is on screen already: only recorded
                    self.on_frame(frame, self._status())
        except Exception as exc:  # the UI must hear about it; the thread must not die silently
            line = f"{type(exc).__name__}: {exc}".splitlines()[0]
            self.on_notice(Notice(f"sampling stopped: {line}", "error"))
            self._debug_log(traceback.format_exc())
        finally:
            session.close(session.stop_reason or "sampling stopped")
            self._closed.set()

    def _open_initial(self, path: str, force: bool) -> None:
        try:
            self.session.record(path, force, make_dirs=True)
        except CliError as exc:
            self.on_notice(Notice(f"cannot record: {exc}", "error"))
        else:
            self.on_notice(Notice(f"recording to {path}"))

    def _status(self) -> FeedStatus:
        return FeedStatus(self.session.recording, self.session.ticks, self.session.sampler.postmaster_start)

    @staticmethod
    def _debug_log(text: str) -> None:
        path = os.environ.get("PGIO_TUI_DEBUG_LOG")
        if path:
            with open(path, "a") as fh:
                fh.write(time.strftime("%H:%M:%S ") + text + "\n")


class Connecting:
    """The live FrameSource of a monitor that paints before its server answers (the live command).

    The sampler is opened and its first tick taken on a thread started at once; with `after_paint`
    the thread first waits for the monitor's first paint (`ui_painted`, at most PAINT_WAIT_S):
    psycopg's import, the sampler's and the connection are CPU the UI's import and first paint would
    share under the GIL (a fifth of the work to the first frame), so they come after it and the
    header and panes show at once. The second tick follows EARLY_TICK_S after the first, so the
    first rates are on screen a quarter of a second after the first tick. Once there,
    `on_connected(feed)` runs on the feed's thread (the session info is filled in) and the
    LiveFeed takes over; requests made before are handed to it in order. An error (cannot connect)
    calls `on_failed()` there instead (the app ends); `wait()` then raises it. Both are set by
    the UI, once imported (the thread starts first)."""

    abilities = LiveFeed.abilities

    def __init__(self, open_sampler: Callable[[], SamplerLike], *, after_paint: bool = False, **feed_options):
        self.feed: LiveFeed | None = None
        self.error: BaseException | None = None
        self.on_connected: Callable[[LiveFeed], object] = lambda feed: None
        self.on_failed: Callable[[], object] = lambda: None
        self._done = threading.Event()
        self._early: list[Callable[[LiveFeed], object]] = []
        self._lock = threading.Lock()
        self._stop_reason: str | None = None
        self._painted = threading.Event()
        self._closed = False  # closed before connecting: never connect
        if not after_paint:
            self._painted.set()
        self._thread = threading.Thread(target=self._open, args=(open_sampler, feed_options),
                                        name="pgio-tui-connect", daemon=True)
        self._thread.start()

    def _open(self, open_sampler: Callable[[], SamplerLike], feed_options: dict) -> None:
        self._painted.wait(PAINT_WAIT_S)
        if self._closed:
            self._done.set()
            return
        try:
            feed = LiveFeed(open_sampler(), **feed_options)
            feed.prime(EARLY_TICK_S)
            self.feed = feed
        except BaseException as exc:  # handed to the main thread by wait(), to the app by attach()
            self.error = exc
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> LiveFeed | None:
        """The feed once connected (None: still connecting after `timeout`); raises the error."""
        self._done.wait(timeout)
        if self.error is not None:
            raise self.error
        return self.feed

    def close(self) -> None:
        """Nobody will use the sampler (the TUI ended or could not start): close it once opened,
        or never open it when the thread still waits for the paint."""
        self.cancel()
        self._thread.join()
        if self.feed is not None:
            self.feed.sampler.close()

    # --- FrameSource ----------------------------------------------------------------------------

    def attach(self, sink: FrameSink) -> None:
        sink.run_in_thread(lambda: self._run(sink), "sampler")

    def _run(self, sink: FrameSink) -> None:
        self._done.wait()
        feed = self.feed
        if feed is None:  # cannot connect: the app ends, the caller raises the error
            self.on_failed()
            return
        self.on_connected(feed)
        with self._lock:
            early, self._early = self._early, []
            if self._stop_reason is not None:
                feed.stop(self._stop_reason)
        for request in early:
            request(feed)
        feed.on_frame, feed.on_notice = sink.deliver, sink.tell
        if feed._first is not None:
            sink.deliver(feed._first, feed._status())
        feed.run()

    def _to_feed(self, request: Callable[[LiveFeed], object]) -> None:
        with self._lock:
            if self.feed is None or self._early:
                self._early.append(request)
                return
        request(self.feed)

    def detach(self, reason: str = "quit") -> None:
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason
            feed = self.feed
        if feed is not None:
            feed.stop(reason)

    def ui_painted(self) -> None:
        """The header and panes are on screen: connect now (with `after_paint`); also for a run with
        nobody to paint for (off a terminal)."""
        self._painted.set()

    def cancel(self) -> None:
        """The app ended: a thread still waiting for the paint never connects (wait() returns at
        once); one connecting is left to finish."""
        self._closed = True
        self._painted.set()

    def ui_ready(self) -> None:
        self._to_feed(LiveFeed.ui_ready)

    # --- LiveSource -----------------------------------------------------------------------------

    @property
    def sampler(self) -> SamplerLike | None:
        feed = self.wait()
        return feed.sampler if feed is not None else None

    @property
    def recording(self) -> str | None:
        return self.feed.recording if self.feed is not None else None

    @property
    def started(self) -> bool:
        return self.feed is not None and self.feed.started

    def start_recording(self, path: str, force: bool = False) -> None:
        self._to_feed(lambda feed: feed.start_recording(path, force))

    def stop_recording(self) -> None:
        self._to_feed(LiveFeed.stop_recording)

    def annotate(self, text: str) -> None:
        self._to_feed(lambda feed: feed.annotate(text))

    def attach_workload(self, workload: WorkloadLike) -> None:
        self._to_feed(lambda feed: feed.attach_workload(workload))
