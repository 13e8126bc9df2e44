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

from pgio_tui.interfaces import SamplerLike, WorkloadLike
from pgio_tui.session import FrameConsumer, end_workload, on_signals
from pgio_tui.tui.app import QUIT_GRACE_S, MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.session import session_from_sampler


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
    hangup = _HangUp(app, feed)
    with on_signals(hangup, (signal.SIGHUP, signal.SIGTERM)):
        try:
            app.run()
        finally:
            end_workload(app.workload, QUIT_GRACE_S)  # however the app ended, a workload launched from it ends too
            feed.stop()
            if feed.started and not feed.wait_closed(15):
                print("pgio-tui: the sampler did not stop in 15 s; the recording may lack its last second",
                      file=sys.stderr)
    return app.return_code or 0


class _HangUp:
    """The terminal is gone: stop the feed (the recording closes with the signal as its reason),
    ask the app to exit, and make sure the process does leave."""

    def __init__(self, app: MonitorApp, feed: LiveFeed, grace: float = 5.0):
        self.app, self.feed, self.grace = app, feed, grace
        self._watchdog: threading.Thread | None = None

    def __call__(self, sig: signal.Signals) -> None:
        self.feed.stop(f"signal {sig.name}")
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
            self.feed.wait_closed(15)
            time.sleep(self.grace)
            os._exit(code)

        self._watchdog = threading.Thread(target=run, name="pgio-tui-exit-watchdog", daemon=True)
        self._watchdog.start()
