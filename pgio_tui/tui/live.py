"""`run_monitor`: the live view on an opened sampler, its Session driven by a LiveFeed thread.

SIGHUP (the ssh link dropped) and SIGTERM close the recording cleanly instead of killing it; the
handlers are installed for the length of the run only.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from pgio_tui.interfaces import SamplerLike, WorkloadLike
from pgio_tui.session import FrameConsumer, end_workload, on_signals
from pgio_tui.tui.app import QUIT_GRACE_S, MonitorApp
from pgio_tui.tui.feed import Connecting, LiveFeed
from pgio_tui.tui.session import SessionInfo, session_from_sampler
from pgio_tui.tui.widgets.status import HeaderState


def run_monitor(sampler: SamplerLike, *, record_path: str | None = None, force: bool = False, theme: str | None = None,
                workload: WorkloadLike | None = None, consumers: list[FrameConsumer] | None = None,
                keep_recording: bool = False) -> int:
    """Run the live monitor on an already-opened Sampler until the user quits; returns an exit code.

    The sampler (and the recorder, when recording) run on a thread worker; the caller keeps owning
    the sampler and closes it afterwards. `workload` (optional) is a launched workload: its output
    tail is shown, `s` stops it, and while recording its output and summary go into the same file.
    `consumers` get every frame too, on the sampler's thread (pgio_tui.session.Session). The
    recording ends with that workload unless `keep_recording`.
    """
    feed = LiveFeed(sampler, record_path=record_path, force=force, workload=workload, consumers=consumers,
                    keep_recording=keep_recording)
    first = feed.prime()  # one tick before the UI starts: the first paint has data
    app = MonitorApp(session_from_sampler(sampler), source=feed, frames=[first] if first is not None else [],
                     theme=theme, workload=workload)
    return _run(app, lambda: feed)


def run_connecting(connecting: Connecting, session: SessionInfo, *, theme: str | None = None) -> int:
    """The live command: the monitor paints its header and panes, then `connecting` opens the
    sampler on its thread (tui/feed.py), its first rates a quarter of a second after the first
    tick. `session` is what is known before the server answers (the target, the interval), filled
    in once connected. A failed connection is raised (CliError) as before the TUI started: off a
    terminal at once (connected first), on one once the app has ended."""
    app = connecting_app(connecting, session, theme=theme)
    try:
        # Off a terminal nobody sees an early paint: connected first, as the other commands are (a
        # failure said before the TUI starts). On one, a failure so far (none, when it waits for the paint).
        on_terminal = sys.stdout.isatty()
        if not on_terminal:
            connecting.ui_painted()
        connecting.wait(0 if on_terminal else None)
        code = _run(app, lambda: connecting.feed)
        connecting.cancel()  # ended before its first paint (q, an error): nothing to connect for
        connecting.wait()  # the connection's error, if that is what ended the app
        return code
    finally:
        connecting.close()


def connecting_app(connecting: Connecting, session: SessionInfo, *, theme: str | None = None) -> MonitorApp:
    """The monitor on a Connecting source: "connecting…" in the header until the server answers,
    then the session filled in from the sampler; a failed connection ends the app."""
    state = HeaderState(detail="connecting…")
    app = MonitorApp(session, source=connecting, theme=theme, state=state)

    def connected(feed: LiveFeed) -> None:
        vars(session).update(vars(session_from_sampler(feed.sampler)))
        state.detail = ""
        app.call_from_thread(app.session_known)

    connecting.on_connected = connected
    connecting.on_failed = lambda: app.call_from_thread(app.exit, 1)
    return app


def _run(app: MonitorApp, feed_of: Callable[[], LiveFeed | None]) -> int:
    """Run the app until it ends; then the workload it launched and the feed's loop end too."""
    hangup = _HangUp(app, feed_of)
    with on_signals(hangup, (signal.SIGHUP, signal.SIGTERM)):
        try:
            app.run()
        finally:
            end_workload(app.workload, QUIT_GRACE_S)  # however the app ended, a workload launched from it ends too
            feed = feed_of()
            if feed is not None:
                feed.stop()
                if feed.started and not feed.wait_closed(15):
                    print("pgio-tui: the sampler did not stop in 15 s; the recording may lack its last second",
                          file=sys.stderr)
    return app.return_code or 0


class _HangUp:
    """The terminal is gone: stop the feed (the recording closes with the signal as its reason),
    ask the app to exit, and make sure the process does leave."""

    def __init__(self, app: MonitorApp, feed_of: Callable[[], LiveFeed | None], grace: float = 5.0):
        self.app, self.feed_of, self.grace = app, feed_of, grace
        self._watchdog: threading.Thread | None = None

    def __call__(self, sig: signal.Signals) -> None:
        self.app.source.detach(f"signal {sig.name}")
        try:
            asyncio.get_running_loop().call_soon_threadsafe(self.app.exit, 0)
        except RuntimeError:
            pass
        self._exit_later(128 + sig)

    def _exit_later(self, code: int) -> None:
        """With its terminal gone, Textual can block for ever in shutdown: its output thread dies on
        EIO and the main thread then waits on the thread's full queue. Once the recording is closed,
        give the normal exit `grace` seconds, then leave anyway."""
        if self._watchdog is not None:
            return

        def run():
            feed = self.feed_of()
            if feed is not None:
                feed.wait_closed(15)
            time.sleep(self.grace)
            os._exit(code)

        self._watchdog = threading.Thread(target=run, name="pgio-tui-exit-watchdog", daemon=True)
        self._watchdog.start()
