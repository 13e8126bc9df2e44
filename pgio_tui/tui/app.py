"""MonitorApp and its entry point `run_monitor(sampler, ...)` (the live and bench commands call it).

The app owns a FrameHistory and a MonitorScreen that draws it. Frames come from a LiveFeed (sampler
and recorder on a thread worker, handed over with post_message) or, with no feed, from an iterable
given up front (a recording: snapshot tests). One timer redraws what is visible
at most REDRAW_HZ times a second, inside batch_update, and only when something changed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from pgio_tui.frame import Frame
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.messages import FeedNotice, FrameArrived
from pgio_tui.tui.screens.dialogs import ConfirmScreen, HelpScreen, PromptScreen
from pgio_tui.tui.screens.monitor import PANES, MonitorScreen
from pgio_tui.tui.screens.statements import StatementsScreen
from pgio_tui.tui.screens.workload_dialog import WorkloadScreen
from pgio_tui.tui.session import SessionInfo, session_from_recording, session_from_sampler
from pgio_tui.tui.themes import ThemedApp
from pgio_tui.tui.widgets.status import HeaderState

REDRAW_HZ = 4
QUIT_GRACE_S = 8.0  # q with a workload running: how long it may take to stop and write its summary
RECORDINGS_DIR = "recordings"


class MonitorApp(ThemedApp, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "pgio-tui"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("space", "toggle_pause", "Pause", id="pause"),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="help"),
        Binding("S", "statements", "Statements", id="statements"),
        Binding("r", "toggle_record", "Record", id="record"),
        Binding("m", "annotate", "Mark", id="annotate"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom", key_display="+/-", id="zoom_in"),
        Binding("minus", "zoom(1)", "Zoom out", show=False, id="zoom_out"),
        Binding("t", "next_theme", "Theme", id="theme"),
        Binding("w", "start_workload", "Workload", id="start_workload"),
        Binding("s", "stop_workload", "Stop workload", show=False, id="stop_workload"),
    ]

    def __init__(self, session: SessionInfo, *, feed: LiveFeed | None = None, frames: Iterable[Frame] = (),
                 theme: str | None = None, workload: Any = None, mode: str = "live",
                 recordings_dir: str = RECORDINGS_DIR, redraw_hz: float = REDRAW_HZ):
        super().__init__()
        self.session = session
        self.feed = feed
        self.workload = workload
        self.history = FrameHistory()
        self.history.extend(frames)
        self.state = HeaderState(mode=mode)
        self.recordings_dir = recordings_dir
        self.redraw_hz = redraw_hz
        self._wanted_theme = theme
        self._dirty = True
        self._last_redraw = 0.0
        self.first_frame_at: float | None = None  # monotonic time the first live frame was drawn
        self._workload_form: tuple[str, dict] = ("pgbench", {})  # the dialog's last values
        self._quitting = False
        self.init_themes(theme)

    # --- lifecycle ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.apply_wanted_theme()
        self.push_screen(self.make_screen())
        if self.feed is not None:
            self.feed.on_frame = lambda f, s: self.post_message(FrameArrived(f, s))
            self.feed.on_notice = lambda n: self.post_message(FeedNotice(n))
            self.run_worker(self.feed.run, thread=True, exit_on_error=False, name="sampler", group="feed",
                            description="sampler and recorder")
        self.set_interval(1 / self.redraw_hz, self._redraw_tick)

    def on_unmount(self) -> None:
        if self.feed is not None:  # however the app ends, the sampler thread ends with it
            self.feed.stop()

    @property
    def monitor(self) -> MonitorScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MonitorScreen):
                return screen
        return None

    def on_frame_arrived(self, message: FrameArrived) -> None:
        self.history.push(message.frame)
        st = message.status
        self.state.recording, self.state.recorded_ticks = st.recording, st.recorded_ticks
        self.state.postmaster_start = st.postmaster_start
        self.request_redraw()  # show a tick at once; the timer catches up with bursts

    def on_feed_notice(self, message: FeedNotice) -> None:
        n = message.notice
        self.notify(n.text, severity=n.severity, timeout=8 if n.severity == "error" else 4)

    def make_screen(self) -> MonitorScreen:
        """The screen the panes live on (replay puts the same panes on its own screen)."""
        return MonitorScreen(self.history, self.session, self.state, self.workload)

    def request_redraw(self, now: bool = False) -> None:
        """Mark the panes stale; draw at once unless a draw happened within the frame budget."""
        self._dirty = True
        if now or time.monotonic() - self._last_redraw >= 1 / self.redraw_hz:
            self._redraw_tick()

    def _redraw_tick(self) -> None:
        if not self._dirty:
            return
        screen = self.monitor
        if screen is None:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        screen.redraw()
        top = self.screen
        if top is not screen and isinstance(top, StatementsScreen):
            top.redraw_view()

    def on_monitor_screen_first_data(self, _message) -> None:
        self.first_frame_at = time.monotonic()
        self.call_after_refresh(self._first_frame_drawn)

    def _first_frame_drawn(self) -> None:
        if self.feed is not None:
            self.feed.ui_ready()
        path = os.environ.get("PGIO_TUI_FIRST_FRAME_FILE")  # bench/tui_cpu.py measures start-up
        if path:
            try:
                with open(path, "w") as fh:  # wall clock, and CPU seconds used so far
                    fh.write(f"{time.time():.6f} {time.process_time():.6f}\n")
            except OSError:
                pass

    # --- actions --------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """With a workload running, stop it first and let its end reach the recording (its exit
        code and summary); q again quits at once."""
        w = self.workload
        if self.feed is not None and not self._quitting and w is not None and getattr(w, "running", False):
            self._quitting = True
            self.state.detail = "stopping workload…"
            self.notify("stopping workload… (q again: quit now)", timeout=QUIT_GRACE_S)
            self.request_redraw(now=True)
            self._stop_then_quit(w)
            return
        self._quit_now()

    def _quit_now(self) -> None:
        if self.feed is not None:
            self.feed.stop()
        self.exit(0)

    @work(thread=True, exit_on_error=False, group="quit")
    def _stop_then_quit(self, workload) -> None:
        end_workload(workload, QUIT_GRACE_S, until_recorded=3 * self.session.interval + 1)
        self.call_from_thread(self._quit_now)

    def action_toggle_pause(self) -> None:
        screen = self.monitor
        if screen is not None:
            screen.set_paused(not screen.paused)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_statements(self) -> None:
        """The top statements at the monitor's position (S again, or escape, goes back)."""
        if isinstance(self.screen, StatementsScreen):
            self.pop_screen()
            return
        monitor = self.monitor
        if monitor is not None:
            self.push_screen(StatementsScreen(self.history, self.session, at=lambda: monitor.view().t1))

    def action_zoom(self, step: int) -> None:
        screen = self.monitor
        if screen is not None:
            screen.zoom(step)

    def action_show_pane(self, index: int) -> None:
        screen = self.monitor
        if screen is not None:
            screen.action_show_pane(index)

    def action_toggle_record(self) -> None:
        if self.feed is None:
            self.notify("not live: nothing to record", severity="warning")
            return
        if self.state.recording or self.feed.recording:
            self.feed.stop_recording()
            self.notify("stopping the recording at the next tick…", timeout=2)
            return
        self.push_screen(PromptScreen("Record to file", self.default_recording_path(),
                                      hint="starts at the next tick; r again stops it"), self._start_recording)

    def default_recording_path(self) -> str:
        host = (self.session.host or "local").strip("/").replace("/", "_") or "local"
        if host.startswith("tmp") or "/" in (self.session.host or ""):
            host = "local"
        return os.path.join(self.recordings_dir, f"{host}-{time.strftime('%Y%m%d-%H%M%S')}.pgio")

    def _start_recording(self, path: str | None) -> None:
        if path and self.feed is not None:
            self.feed.start_recording(path)

    def action_annotate(self) -> None:
        if self.feed is None:
            self.notify("not live: annotations go into a live session's recording", severity="warning")
            return
        hint = ("recorded as an event at the next tick" if self.state.recording
                else "not recording: drawn on the charts only")
        self.push_screen(PromptScreen("Annotation", "", hint=hint, placeholder="e.g. raised clients to 64"),
                         self._annotate)

    def _annotate(self, text: str | None) -> None:
        if text and self.feed is not None:
            self.feed.annotate(text)

    def action_stop_workload(self) -> None:
        w = self.workload
        if w is None or not getattr(w, "running", False):
            self.notify("no workload running", timeout=2)
            return
        kind = getattr(w, "kind", "the workload")
        self.push_screen(ConfirmScreen(f"Stop {kind}?"), self._stop_workload)

    def _stop_workload(self, yes: bool | None) -> None:
        if yes:
            self._stop_workload_thread()

    @work(thread=True, exit_on_error=False, group="workload")
    def _stop_workload_thread(self) -> None:
        """stop() may wait for the process to finish its summary: not on the UI thread."""
        try:
            self.workload.stop()
        except Exception as exc:
            self.post_message(FeedNotice(_notice(f"stopping the workload: {exc}", "error")))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Launching a workload needs a live server: without one, `w` is out of the footer."""
        if action == "start_workload" and self.feed is None:
            return False
        return True

    def action_start_workload(self) -> None:
        if self.feed is None:
            self.notify("not live: a workload needs a live session", severity="warning")
            return
        w = self.workload
        if w is not None and getattr(w, "running", False):
            self.notify(f"{getattr(w, 'kind', 'a workload')} is running: one at a time (s stops it)",
                        severity="warning")
            return
        kind, values = self._workload_form
        self.push_screen(WorkloadScreen(self._build_workload, kind=kind, values=values), self._launch_workload)

    def _build_workload(self, kind: str, fields: dict):
        """The dialog's fields -> a workload on the monitored server (WorkloadError: one line)."""
        from pgio_tui.workloads.launch import from_fields
        self._workload_form = (kind, dict(fields))
        return from_fields(kind, fields, self.feed.sampler)

    def _launch_workload(self, workload) -> None:
        if workload is None or self.feed is None:
            return
        self.workload = workload
        screen = self.monitor
        if screen is not None:
            screen.set_workload(workload)
        self.feed.attach_workload(workload)  # a tick source from the next tick on; recorded if recording
        self._start_workload_thread(workload)

    @work(thread=True, exit_on_error=False, group="workload")
    def _start_workload_thread(self, workload) -> None:
        """Off the UI thread: starting may do file and process work; setup then runs in the
        workload's own thread and the strip shows its progress."""
        try:
            workload.start()
        except Exception as exc:
            self.post_message(FeedNotice(_notice(f"starting {workload.kind}: {exc}", "error")))
        else:
            self.post_message(FeedNotice(_notice(f"{workload.kind} started", "information")))

    # --- command palette ------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand("Pause / resume display", "Freeze the charts; sampling and recording go on",
                            self.action_toggle_pause)
        yield SystemCommand("Start / stop recording", "Record this session to a file (r)", self.action_toggle_record)
        yield SystemCommand("Add annotation", "Mark this moment on the charts and in the recording (m)",
                            self.action_annotate)
        yield SystemCommand("Zoom in", "Shorter shared time window (+)", lambda: self.action_zoom(-1))
        yield SystemCommand("Zoom out", "Longer shared time window (-)", lambda: self.action_zoom(1))
        yield SystemCommand("Next theme", "Cycle through the themes (t)", self.action_next_theme)
        yield SystemCommand("Help", "Keys, panes and chart marks (? or F1)", self.action_help)
        yield SystemCommand("Statements", "Top statements by time and I/O (S)", self.action_statements)
        for i, (_key, _short, cls) in enumerate(PANES):
            yield SystemCommand(f"Show pane {i + 1}: {cls.TITLE}", f"Focus the {cls.TITLE} pane ({i + 1})",
                                lambda i=i: self.action_show_pane(i))
        if self.feed is not None:
            yield SystemCommand("Start workload…", "Launch pgbench or pgio on this server (w)",
                                self.action_start_workload)
        if self.workload is not None:
            yield SystemCommand("Stop workload", "Stop the launched workload (s)", self.action_stop_workload)


def _notice(text: str, severity: str = "information"):
    from pgio_tui.tui.feed import Notice
    return Notice(text, severity)


def end_workload(workload: Any, grace: float = QUIT_GRACE_S, until_recorded: float = 0.0) -> None:
    """Stop a running workload and wait (bounded) for its end, then up to `until_recorded` seconds
    for a tick to carry its stop (its workload_stop event; the recording's row gets its summary)."""
    if workload is None or not getattr(workload, "running", False):
        return
    workload.stop()
    wait = getattr(workload, "wait", None)
    if wait is None:
        return
    if not wait(grace):
        kill = getattr(workload, "kill", None)
        if kill is not None:
            kill()
            wait(2)
    deadline = time.monotonic() + until_recorded
    while not getattr(workload, "done", True) and time.monotonic() < deadline:
        time.sleep(0.05)


# --- entry points -------------------------------------------------------------------------------

def run_monitor(sampler: Any, *, record_path: str | None = None, force: bool = False, theme: str | None = None,
                workload: Any = None) -> int:
    """Run the live monitor on an already-opened Sampler until the user quits; returns an exit code.

    The sampler (and the recorder, when recording) run on a thread worker; the caller keeps owning
    the sampler and closes it afterwards. `workload` (optional) is a launched workload: an object
    with `.kind`, `.running`, `.stop()` and `.output_tail(n) -> list[str]`; it may also have
    `.on_recorder(recorder_or_None)`, called on the recorder's thread when recording starts/stops,
    so it can store its output in the same file. Its output tail is shown and `s` stops it.
    """
    session = session_from_sampler(sampler)
    feed = LiveFeed(sampler, record_path=record_path, force=force, workload=workload)
    first = feed.prime()  # one tick before the UI starts: the first paint has data
    app = MonitorApp(session, feed=feed, frames=[first] if first is not None else [], theme=theme,
                     workload=workload)
    previous = _on_hangup(app, feed)
    try:
        app.run()
    finally:
        end_workload(app.workload)  # however the app ended, a workload launched from it ends too
        feed.stop()
        if feed.started and not feed.wait_closed(15):
            print("pgio-tui: the sampler did not stop in 15 s; the recording may lack its last second",
                  file=sys.stderr)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return app.return_code or 0


def _on_hangup(app: MonitorApp, feed: LiveFeed) -> dict:
    """SIGHUP (the ssh link dropped) and SIGTERM close the recording cleanly instead of killing it."""
    def handler(signum, _frame):
        feed.stop(f"signal {signal.Signals(signum).name}")
        try:
            import asyncio
            asyncio.get_running_loop().call_soon_threadsafe(app.exit, 0)
        except RuntimeError:
            pass
        _exit_later(feed, 128 + signum)

    previous = {}
    for sig in (signal.SIGHUP, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread
            pass
    return previous


_watchdog: list = []


def _exit_later(feed: LiveFeed, code: int, grace: float = 5.0) -> None:
    """With its terminal gone, Textual can block for ever in shutdown: its output thread dies on
    EIO and the main thread then waits on the thread's full queue. Once the recording is closed,
    give the normal exit `grace` seconds, then leave anyway."""
    if _watchdog:
        return

    def run():
        feed.wait_closed(15)
        time.sleep(grace)
        os._exit(code)

    t = threading.Thread(target=run, name="pgio-tui-exit-watchdog", daemon=True)
    _watchdog.append(t)
    t.start()


def recording_app(rec, *, theme: str | None = None, last_seconds: float = 3600) -> MonitorApp:
    """A MonitorApp showing a recording's last `last_seconds` (static: no feed)."""
    session = session_from_recording(rec)
    start = rec.tick_at(rec.end_t - last_seconds) if rec.end_t is not None else None
    frames = list(rec.frames(start))
    app = MonitorApp(session, frames=frames, theme=theme, mode="replay")
    app.state.detail = f"recording {os.path.basename(str(rec.path))}"
    return app
