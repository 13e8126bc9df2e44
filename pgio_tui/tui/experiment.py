"""`experiment run --tui`: the live monitor on the run under way, with the experiment strip.

The experiment (the runner's loop: settings, hygiene, one Session per run, settings put back) runs
on a thread of its own, started when the app is mounted; each run's Session hands its frames to
the app as the live feed does (the feed here plays the headless driver's status line: it gets
every frame). `q` stops the run under way (it is kept, marked interrupted, as Ctrl-C headless); the
thread then puts the settings back, and run_experiment_tui returns only once it has. The command
prints the results table afterwards, as headless does.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable

from textual.app import ComposeResult

from pgio_tui.experiments.progress import Progress
from pgio_tui.interfaces import SamplerLike
from pgio_tui.session import on_signals
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import FeedStatus, Notice
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.experiment_strip import ExperimentStrip
from pgio_tui.tui.widgets.footer import FooterBar

STRIP_HZ = 1.0  # the strip's clock (elapsed, ETA) moves between frames and between runs too


class ExperimentFeed:
    """The app's FrameSource while an experiment runs. `body(feed)` is the experiment; it drives
    each run's Session headless with this feed as its status line (show_status gets every frame)
    and tells it each Session (on_session) so that quitting can stop the workload under way."""

    abilities: frozenset[str] = frozenset()
    enabled = False  # as a status line: nothing of its own to print
    tty = False

    def __init__(self, body: Callable[[ExperimentFeed], None], progress: Progress):
        self.body = body
        self.progress = progress
        self.sink = None
        self.session = None
        self.quitting = False
        self.ended = threading.Event()
        self.error: BaseException | None = None
        self.last = ""  # the last finished run's line
        self.outcome: str | None = None  # how the experiment ended, once it has
        self.thread: threading.Thread | None = None

    # --- FrameSource ----------------------------------------------------------------------------

    def attach(self, sink) -> None:
        self.sink = sink
        self.thread = threading.Thread(target=self._work, name="experiment", daemon=True)
        self.thread.start()

    def detach(self, reason: str = "quit") -> None:
        self.stop()

    def ui_painted(self) -> None:
        pass

    def ui_ready(self) -> None:
        pass

    def stop(self) -> None:
        """Stop the run under way (kept, marked interrupted) and every run after it."""
        self.quitting = True
        workload = self.session.workload if self.session is not None else None
        if workload is not None and not workload.finished:
            workload.stop()

    def _work(self) -> None:
        try:
            self.body(self)
            self.outcome = f"finished: {self.progress.finished_count()} of {len(self.progress.plan.runs)} runs ended"
        except BaseException as exc:  # noqa: BLE001 - Interrupted, a settings error: the app must hear it
            self.error = exc
            line = (str(exc).splitlines() or [type(exc).__name__])[0] or type(exc).__name__
            self.outcome = f"stopped: {line}"
            if type(exc).__name__ not in ("Interrupted", "KeyboardInterrupt", "CliError", "SettingsError",
                                          "PlanError", "WorkloadError", "PageCacheError"):
                self._debug(traceback.format_exc())
        finally:
            self.ended.set()
            self.tell(self.outcome or "experiment ended", "information")

    @staticmethod
    def _debug(text: str) -> None:
        import os
        path = os.environ.get("PGIO_TUI_DEBUG_LOG")
        if path:
            with open(path, "a") as fh:
                fh.write(text + "\n")

    # --- what the experiment's thread calls ------------------------------------------------------

    def tell(self, text: str, severity: str = "information") -> None:
        """A message of the runner (or a finished run's line) as a notification."""
        if self.sink is not None:
            self.sink.tell(Notice(text, severity))

    def finished_line(self, text: str) -> None:
        """A finished run's line (the strip's `last:`), or one of its `  flag:` lines (told only)."""
        if not text.startswith("  flag: "):
            self.last = text
        self.tell(text)

    def on_session(self, session) -> None:
        self.session = session
        if self.quitting:
            self.stop()

    # --- the headless driver's status line ------------------------------------------------------

    def show_status(self, frame, label: str) -> None:
        if self.quitting:
            self.stop()
        if self.sink is not None:
            session = self.session
            self.sink.deliver(frame, FeedStatus(session.recording if session is not None else None,
                                                session.ticks if session is not None else 0, None))

    show = show_status

    def done(self) -> None:
        pass


class ExperimentScreen(MonitorScreen):
    CSS_PATH = "monitor.tcss"  # relative to this module (MonitorScreen's is relative to screens/)
    EXTRA_ROWS = 2  # the strip

    def __init__(self, *args, feed: ExperimentFeed, **kw):
        super().__init__(*args, **kw)
        self.feed = feed
        self._strip: ExperimentStrip | None = None  # found on mount

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterBar):
                yield ExperimentStrip(id="experiment")
            yield widget

    def on_mount(self) -> None:
        super().on_mount()
        self._strip = self.query_one(ExperimentStrip)
        self.set_interval(1 / STRIP_HZ, self.draw_strip)

    def draw_strip(self) -> None:
        feed = self.feed
        if self._strip is not None:
            self._strip.draw(feed.progress.snapshot(), feed.last, feed.outcome)

    def redraw(self, force: bool = False) -> None:
        super().redraw(force)
        if self._strip is not None and self.is_attached:
            self.draw_strip()


class ExperimentApp(MonitorApp):
    def __init__(self, *args, feed: ExperimentFeed, **kw):
        super().__init__(*args, source=feed, **kw)
        self.feed = feed

    def make_screen(self) -> MonitorScreen:
        return ExperimentScreen(self.history, self.session, self.state, feed=self.feed)


def run_experiment_tui(sampler: SamplerLike, body: Callable[[ExperimentFeed], None], progress: Progress, *,
                       theme: str | None = None, say: Callable[[str], object] = lambda text: None) -> ExperimentFeed:
    """Show the experiment live until the user quits; returns the feed once the experiment's
    thread has ended (after a quit: the run under way stopped and the settings put back).
    `sampler` only describes the server for the header (it is not sampled here)."""
    feed = ExperimentFeed(body, progress)
    app = ExperimentApp(session_from_sampler(sampler), feed=feed, theme=theme)

    def hang_up(sig) -> None:
        """SIGTERM, or the terminal gone: stop the run, put the settings back, leave (Textual can
        block for ever in shutdown without its terminal: leave anyway once the thread is done)."""
        feed.stop()
        try:
            asyncio.get_running_loop().call_soon_threadsafe(app.exit, 0)
        except RuntimeError:
            pass

        def leave():
            feed.ended.wait()
            time.sleep(5)
            os._exit(128 + sig)
        threading.Thread(target=leave, name="pgio-tui-exit-watchdog", daemon=True).start()

    with on_signals(hang_up, (signal.SIGHUP, signal.SIGTERM)):
        try:
            app.run()
        finally:
            feed.stop()
            if feed.thread is not None and feed.thread.is_alive():
                say("stopping the run under way and putting the settings back…")
                feed.thread.join()
    return feed
