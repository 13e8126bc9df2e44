"""MonitorApp: the one app that draws a FrameHistory, whatever its FrameSource (tui/sources.py).

Frames come from a LiveFeed (a Session on a thread worker, handed over with post_message), from
replay's player (tui/replay.py) or, for a static view, from an iterable given up front. What the
source can do (record, annotate, launch a workload, seek) decides which keys work, and so the
footer, the command palette and the help screen. What is visible is redrawn when something
changed, inside batch_update, at most REDRAW_HZ times a second (a burst waits for one timer; no
timer runs while nothing happens).
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from pgio_tui.frame import Frame
from pgio_tui.interfaces import WorkloadLike
from pgio_tui.session import end_workload
from pgio_tui.tui.feed import FeedStatus, Notice
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.live_actions import LiveActions
from pgio_tui.tui.live_findings import FindingsRead, FindingsWatch, read_findings
from pgio_tui.tui.messages import FeedNotice, FrameArrived
from pgio_tui.tui.panes import PANES, pane_key
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.session import SessionInfo, session_from_recording
from pgio_tui.tui.sources import ANNOTATE, LAUNCH, RECORD, FrameSource, Recorded
from pgio_tui.tui import textual_private
from pgio_tui.tui.textual_private import QuietInput
from pgio_tui.tui.themes import ThemedApp
from pgio_tui.tui.views import EXTRA_VIEWS
from pgio_tui.tui.widgets.degraded import WarningGate, warnings_of
from pgio_tui.tui.widgets.status import HeaderState

REDRAW_HZ = 4
QUIT_GRACE_S = 8.0  # q with a workload running: how long it may take to stop and write its summary
RECORDINGS_DIR = "recordings"
NEEDS = {"toggle_record": RECORD, "annotate": ANNOTATE, "start_workload": LAUNCH, "stop_workload": LAUNCH}


GC_PAUSE_MAX_S = 10.0  # a first frame that never comes (no data yet) must not leave the collector off
GC_SETTLE_S = 1.0  # after the first frame, the start-up's objects are frozen out of the collector's way


class MonitorApp(QuietInput, LiveActions, ThemedApp, App[int]):
    # The monitor screen's sheet too: read with the app's, the stylesheet is parsed once, not again
    # (whole) when that screen is pushed.
    CSS_PATH = ["app.tcss", "monitor.tcss"]
    TITLE = "pgio-tui"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="quit (a recording is closed cleanly)"),
        Binding("space", "toggle_pause", "Pause", id="pause",
                tooltip="pause the display; sampling and recording go on"),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="help", tooltip="this help"),
        *(Binding(v.key, f"extra_view('{v.key}')", v.name, id=v.id, tooltip=v.tooltip) for v in EXTRA_VIEWS),
        Binding("r", "toggle_record", "Record", id="record",
                tooltip="start / stop recording (asks for a file name)"),
        Binding("m", "annotate", "Mark", id="annotate",
                tooltip="add an annotation: an event in the recording, a ▲ on every chart"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom", key_display="+/-", id="zoom_in",
                tooltip="zoom the shared time window (10s ... 1h; 5m, or a shorter recording's length)"),
        Binding("minus", "zoom(1)", "Zoom out", show=False, id="zoom_out"),
        Binding("t", "next_theme", "Theme", id="theme",
                tooltip="next theme (the command palette, ctrl+p, lists them all)"),
        Binding("w", "start_workload", "Workload", id="start_workload",
                tooltip="start a workload: pgbench or pgio on this server (one at a time)"),
        Binding("s", "stop_workload", "Stop workload", show=False, id="stop_workload",
                tooltip="stop the launched workload (when there is one)"),
    ]

    def __init__(self, session: SessionInfo, *, source: FrameSource | None = None, frames: Iterable[Frame] = (),
                 theme: str | None = None, workload: WorkloadLike | None = None, mode: str = "live",
                 recordings_dir: str = RECORDINGS_DIR, redraw_hz: float = REDRAW_HZ, state: HeaderState | None = None):
        super().__init__()
        self.session = session
        self.source: FrameSource = source if source is not None else Recorded()
        self.workload = workload
        self.history = FrameHistory()
        self.history.extend(frames)
        self.state = state or HeaderState(mode=mode)
        self.recordings_dir = recordings_dir
        self.redraw_hz = redraw_hz
        self._wanted_theme = theme
        self._dirty = True
        self._last_redraw = 0.0
        self._catch_up: Timer | None = None  # the one-shot timer of a redraw put off by the frame budget
        self._warnings = WarningGate()  # a repeated warning is toasted once per few minutes
        self.findings = FindingsWatch()  # live, while recording: each finding told once, as it forms
        self.first_frame_at: float | None = None  # monotonic time the first live frame was drawn
        self._workload_form: tuple[str, dict] = ("pgbench", {})  # the dialog's last values
        self._quitting = False
        self.init_themes(theme)

    def can(self, ability: str) -> bool:
        return ability in self.source.abilities

    # --- lifecycle ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.apply_wanted_theme()
        screen = self.make_screen()
        self.push_screen(screen)
        screen.call_after_refresh(self._painted)  # a screen's callbacks run once it is painted
        self.source.attach(self)
        self.request_redraw()
        if not gc.isenabled():  # paused by the CLI until the first frame: never for longer than this
            self.set_timer(GC_PAUSE_MAX_S, gc.enable)

    def on_ready(self) -> None:
        """Textual's start-up batch is over: its first frame goes out now, not a frame later."""
        textual_private.paint_pending(self.screen)

    def _painted(self) -> None:
        """The first paint is composed: once it is on the terminal, the source may start (the live
        command's connection, whose CPU would hold up Textual's writer thread)."""
        textual_private.after_written(self, self.source.ui_painted)

    def on_unmount(self) -> None:
        self.source.detach()  # however the app ends, the sampler thread ends with it

    # FrameSink: what a source calls (deliver and tell from any thread)
    def deliver(self, frame: Frame, status: FeedStatus) -> None:
        self.post_message(FrameArrived(frame, status))

    def tell(self, notice: Notice) -> None:
        self.post_message(FeedNotice(notice))

    def run_in_thread(self, work: Callable[[], None], name: str) -> None:
        self.run_worker(work, thread=True, exit_on_error=False, name=name, group="source")

    @property
    def monitor(self) -> MonitorScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MonitorScreen):
                return screen
        return None

    def on_frame_arrived(self, message: FrameArrived) -> None:
        self.history.push(message.frame)
        for text in self._warnings.admit(warnings_of(message.frame)):  # "checkpoints are occurring too frequently", ...
            self.notify(text, severity="warning", timeout=8, markup=False)
        st = message.status
        self.state.recording, self.state.recorded_ticks = st.recording, st.recorded_ticks
        self.state.postmaster_start = st.postmaster_start
        if st.recording and self.findings.due():
            self._read_findings(st.recording)
        # show a tick at once; the timer catches up with bursts. The second (live: the early one that
        # brings the first rates) is not held to the frame budget.
        self.request_redraw(now=len(self.history) == 2)

    @work(thread=True, exclusive=True, group="findings", exit_on_error=False)
    def _read_findings(self, path: str) -> None:
        found: list = []
        try:
            found = read_findings(path)
        finally:  # a reading that failed is one too: the next is then due
            self.post_message(FindingsRead(found))

    def on_findings_read(self, message: FindingsRead) -> None:
        for f in self.findings.new(message.found):
            self.notify(f"{f.id}: {f.text}", title="finding", severity="warning", timeout=12, markup=False)

    def on_feed_notice(self, message: FeedNotice) -> None:
        n = message.notice
        self.notify(n.text, severity=n.severity, timeout=8 if n.severity == "error" else 4)

    def make_screen(self) -> MonitorScreen:
        """The screen the panes live on (replay puts the same panes on its own screen)."""
        return MonitorScreen(self.history, self.session, self.state, self.workload)

    def request_redraw(self, now: bool = False) -> None:
        """Mark the panes stale; draw at once unless a draw happened within the frame budget."""
        self._dirty = True
        wait = self._last_redraw + 1 / self.redraw_hz - time.monotonic()
        if now or wait <= 0:
            self._redraw_tick()
        elif self._catch_up is None:
            self._catch_up = self.set_timer(wait, self._caught_up)

    def _caught_up(self) -> None:
        self._catch_up = None
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
        if top is not screen and hasattr(top, "redraw_view"):  # a ViewScreen (imported when first shown)
            top.redraw_view()

    def session_known(self) -> None:
        """The live server answered after the first paint: what the session says is shown."""
        screen = self.monitor
        if screen is not None and not screen.panes:  # connected before the screen was mounted
            self.call_after_refresh(self.session_known)
            return
        if screen is not None:
            screen.show_notes()
        self.request_redraw()

    def on_monitor_screen_first_data(self, _message) -> None:
        self.first_frame_at = time.monotonic()
        self.call_after_refresh(self._first_frame_drawn)

    def _first_frame_drawn(self) -> None:
        self.source.ui_ready()
        self.set_timer(GC_SETTLE_S, self._settle_gc)
        path = os.environ.get("PGIO_TUI_FIRST_FRAME_FILE")  # bench/tui_cpu.py measures start-up
        if path:
            try:
                with open(path, "w") as fh:  # wall clock, and CPU seconds used so far
                    fh.write(f"{time.time():.6f} {time.process_time():.6f}\n")
            except OSError:
                pass

    @staticmethod
    def _settle_gc() -> None:
        """What exists now (imports, the DOM, styles) lives as long as the app: out of the cyclic
        collector's way, so the collections a tick's garbage triggers do not walk it each time.
        The CLI may have paused the collector for start-up: what garbage that left goes first.
        A moment after the first frame: the collection (tens of ms) does not hold up the first rates."""
        if not gc.isenabled():
            gc.collect()
        gc.freeze()
        gc.enable()

    # --- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """A key works (and is in the footer, the palette and the help) when the source can do it."""
        need = NEEDS.get(action)
        return need is None or self.can(need)

    async def action_quit(self) -> None:
        """With a workload running, stop it first and let its end reach the recording (its exit
        code and summary); q again quits at once."""
        w = self.workload
        if self.can(LAUNCH) and not self._quitting and w is not None and w.running:
            self._quitting = True
            self.state.detail = "stopping workload…"
            self.notify("stopping workload… (q again: quit now)", timeout=QUIT_GRACE_S)
            self.request_redraw(now=True)
            self._stop_then_quit(w)
            return
        self._quit_now()

    def _quit_now(self) -> None:
        self.source.detach()
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
        """The keys of the screen below and of the app, as far as this source can use them."""
        from pgio_tui.tui.screens.dialogs import HelpScreen, help_keys
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_keys(self.screen.active_bindings.values()), notes=self.session.notes))

    def action_extra_view(self, key: str) -> None:
        """An extra view (tui/views.py) over the monitor's position on top; its key again, or
        escape, goes back; another view's key switches to that one."""
        top = self.screen
        shown = getattr(top, "extra_view", None)
        if shown is not None:
            self.pop_screen()
            if shown.key == key:
                return
        monitor = self.monitor
        view = next((v for v in EXTRA_VIEWS if v.key == key), None)
        if monitor is not None and view is not None:
            screen = view.open(self, monitor)
            screen.extra_view = view
            self.push_screen(screen)

    def checkpoint_log(self) -> tuple[list[dict], list[tuple[float, str]]]:
        """Finished checkpoints and too-frequent warnings, oldest first (replay: the whole file)."""
        return self.history.checkpoints, self.history.checkpoint_warnings

    def action_zoom(self, step: int) -> None:
        screen = self.monitor
        if screen is not None:
            screen.zoom(step)

    def action_show_pane(self, index: int) -> None:
        screen = self.monitor
        if screen is not None:
            screen.action_show_pane(index)

    # --- command palette ------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand("Pause / resume display", "Freeze the charts; sampling and recording go on",
                            self.action_toggle_pause)
        yield SystemCommand("Zoom in", "Shorter shared time window (+)", lambda: self.action_zoom(-1))
        yield SystemCommand("Zoom out", "Longer shared time window (-)", lambda: self.action_zoom(1))
        yield SystemCommand("Next theme", "Cycle through the themes (t)", self.action_next_theme)
        yield SystemCommand("Help", "Keys, panes and chart marks (? or F1)", self.action_help)
        for v in EXTRA_VIEWS:
            yield SystemCommand(v.name, f"{v.palette} ({v.key})", lambda key=v.key: self.action_extra_view(key))
        for i, cls in enumerate(PANES):
            yield SystemCommand(f"Show pane {pane_key(i)}: {cls.TITLE}", f"Focus the {cls.TITLE} pane ({pane_key(i)})",
                                lambda i=i: self.action_show_pane(i))
        yield from self.live_commands()


def recording_app(rec, *, theme: str | None = None, last_seconds: float = 3600) -> MonitorApp:
    """A MonitorApp showing a recording's last `last_seconds` (static: it cannot record or seek)."""
    session = session_from_recording(rec)
    start = rec.tick_at(rec.end_t - last_seconds) if rec.end_t is not None else None
    frames = list(rec.frames(start))
    app = MonitorApp(session, frames=frames, theme=theme, mode="replay")
    app.state.detail = f"recording {os.path.basename(str(rec.path))}"
    return app
