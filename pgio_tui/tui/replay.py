"""Replay: a recording played through the live view's own screen and panes, with a timeline.

`ReplayApp` is the one `MonitorApp` on a recording (a `Recorded` source that can seek but not
record, annotate or launch: those keys are out of the footer, the palette and the help), moved
by a `Player` (pgio_tui/store/player.py): a Textual timer advances the player and pushes the
Frames it moved over into the app's FrameHistory, in batches of at most MAX_BATCH ticks, so no
timer tick holds the UI on SQLite for long. The timer runs only while it has work: paused, it polls
a file still being written every POLL_S, and on a closed file it stops, so a replay left standing
does not wake the process. A seek (step back, g/G, j, n/N, a click) rebuilds the history window
from one batched `Recording.frames(window_start, position)` read of the ticks it does not share
with the window before (store/window_frames.py). The moments to jump to are found on a thread
worker with its own connection (SQLite connections stay on the thread that opened them).

`ReplayScreen` is `MonitorScreen` plus the timeline and the replay keys: the panes are the same
widgets, unchanged.
"""

from __future__ import annotations

import functools
import threading
import time
from bisect import bisect_right
from collections.abc import Callable

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer

from pgio_tui.store.moments import Moment, find_moments
from pgio_tui.sources.checkpoint_rows import too_frequent
from pgio_tui.store.player import Player, hms, parse_jump, speed_label
from pgio_tui.store.schema import RecordingError
from pgio_tui.store.window_frames import WindowFrames
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.screens.monitor import DEFAULT_WINDOW, MonitorScreen
from pgio_tui.tui.session import session_from_recording
from pgio_tui.tui.sources import Recorded
from pgio_tui.tui.widgets.timeline import Timeline

PLAY_HZ = 10  # playback timer: small steps keep 1x smooth and each read short
POLL_S = 0.5  # how often a followed file is checked for new ticks
MOMENTS_EVERY_S = 10.0  # while following, moments are recomputed at most this often
FIRST_FRAME_WAIT_S = 2.0  # the moments wait this long at most for the first frame
MAX_PUSH = 600  # a forward move over more tick numbers than this reloads the window instead
JUMP_HINT = "hh:mm:ss (time of day) · +5m / -30s (from here) · 90s, 5m, 1:30 (elapsed)"


def reading(method: Callable) -> Callable:
    """A move that reads the recording: a damaged tick met there (a lazy Recording checks ticks as
    they are read) ends replay with its one line (`error`) instead of a traceback."""
    @functools.wraps(method)
    def wrapper(self: ReplayApp, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except RecordingError as exc:
            self.error = str(exc)
            self.exit(return_code=1)
    return wrapper


class MomentsFound(Message):
    def __init__(self, moments: list[Moment]):
        super().__init__()
        self.moments = moments


class ReplayScreen(MonitorScreen):
    """The monitor screen with the timeline under the panes and the replay keys."""

    CSS_PATH = "monitor.tcss"  # the monitor's sheet (a path is relative to the subclass's module)
    EXTRA_ROWS = 2
    app: ReplayApp  # the one it is pushed on (Textual's `app`, as the type checker should see it)
    BINDINGS = [
        Binding("space", "app.play_pause", "Play/Pause", id="replay.play", tooltip="play / pause"),
        Binding("left", "app.step(-1)", "-1 tick", key_display="←", id="replay.back",
                tooltip="one tick back / forward (shift: 60 ticks)"),
        Binding("right", "app.step(1)", "+1 tick", key_display="→", id="replay.forward",
                tooltip="one tick back / forward (shift: 60 ticks)"),
        Binding("shift+left", "app.step(-60)", "-60 ticks", show=False, id="replay.back60"),
        Binding("shift+right", "app.step(60)", "+60 ticks", show=False, id="replay.forward60"),
        Binding("plus,equals_sign,right_square_bracket", "app.faster", "Speed", key_display="+/-",
                id="replay.faster", tooltip="faster / slower playback (also ] and [)"),
        Binding("minus,left_square_bracket", "app.slower", "Slower", show=False, id="replay.slower"),
        Binding("g,home", "app.home", "Start", show=False, id="replay.home", key_display="g/G",
                tooltip="first / last tick (a file still being written is followed)"),
        Binding("G,end", "app.end", "End", show=False, id="replay.end", key_display="g/G",
                tooltip="first / last tick (a file still being written is followed)"),
        Binding("j", "app.jump", "Jump", priority=True, id="replay.jump", tooltip="jump to a time: " + JUMP_HINT),
        Binding("n", "app.moment(1)", "Next event", key_display="n/N", id="replay.next",
                tooltip="next / previous event: checkpoint, workload, annotation, gap, latency, Dirty"),
        Binding("N", "app.moment(-1)", "Prev event", show=False, id="replay.previous"),
        Binding("z", "app.zoom(-1)", "Zoom", key_display="z/Z", id="replay.zoom_in",
                tooltip="zoom the shared time window"),
        Binding("Z", "app.zoom(1)", "Zoom out", show=False, id="replay.zoom_out"),
    ]

    def __init__(self, player: Player, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.player = player
        self.note = ""
        self.settings: dict[str, str] = {}
        self.workload = None  # the recording's workload is on the timeline, not in the live strip
        self.workload_text = ""

    def compose(self):
        yield from super().compose()
        yield Timeline(id="timeline")

    def on_mount(self) -> None:
        self._timeline = self.query_one(Timeline)

    def redraw(self, force: bool = False) -> None:
        if not self.is_attached or not self.panes:
            return
        p = self.player
        self.settings = self.app.settings_at(p.tick)
        follow = " ●" if p.follow else ""
        self.state.detail = (f"{'▶' if p.playing else '⏸'} {speed_label(p.speed)} "
                             f"{hms(p.elapsed)}/{hms(p.end_t - p.start_t)}{follow}")
        super().redraw(force)
        self._timeline.draw(p, settings=self.settings, workload=self.workload_text, note=self.note)

    def span(self) -> float:
        return self.player.end_t - self.player.start_t

    def zoom(self, step: int) -> int:
        window = super().zoom(step)
        self.app.window_changed()
        return window

    def on_timeline_seek(self, message: Timeline.Seek) -> None:
        self.app.seek_time(message.t)


class ReplayApp(MonitorApp):
    """MonitorApp on a seekable recording, moved by a Player over an open Recording (which the
    caller closes); it adds the timeline and the keys that move in time."""

    def __init__(self, rec, *, speed: float = 1.0, start_t: float | None = None, playing: bool = True,
                 theme: str | None = None, clock: Callable[[], float] = time.monotonic,
                 play_hz: float = PLAY_HZ, poll_s: float = POLL_S):
        self.rec = rec
        self.error: str | None = None  # why replay ended early: a damaged tick (see `reading`)
        self.player = Player(rec, speed=speed, playing=playing, start_t=start_t)
        super().__init__(session_from_recording(rec), source=Recorded(seekable=True), theme=theme, mode="replay")
        self._clock = clock
        self._last_clock: float | None = None
        self._last_poll = 0.0
        self._moments_at = 0.0
        self.play_hz = play_hz
        self.poll_s = poll_s
        self.loaded_from = self.player.tick  # the first tick in the history window
        self._window_frames = WindowFrames(rec)  # the window's Frames, reused by the next window read
        self._first_drawn = threading.Event()
        self._change_ticks = sorted({e.tick for e in rec.events(["setting_change"]) if e.tick is not None})
        self._settings_bucket = -1
        self._settings: dict[str, str] = {}
        self._ckpt_log_at: int | None = None  # the last tick checkpoint_log() read at
        self._play_timer: Timer | None = None  # the playback timer (_pace), made on mount
        self._play_every: float | None = None  # its interval; None: no timer
        self._load_window(DEFAULT_WINDOW)

    # --- the screen -----------------------------------------------------------------------------

    def make_screen(self) -> ReplayScreen:
        """The live screen's panes, plus the timeline."""
        screen = ReplayScreen(self.player, self.history, self.session, self.state)
        screen.workload_text = workload_text(self.rec)
        return screen

    def on_mount(self) -> None:  # before MonitorApp.on_mount (which pushes the screen)
        self._pace()
        self._find_moments()

    def _pace(self) -> None:
        """The playback timer runs play_hz times a second while playing, every poll_s while paused on
        a file still being written (only to see it grow), and not at all when paused on a closed
        file or at its end: a replay left standing does not wake the process."""
        p = self.player
        every = 1 / self.play_hz if p.playing else (self.poll_s if p.follow else None)
        if every == self._play_every:
            return
        if self._play_timer is not None:
            self._play_timer.stop()
        self._play_timer = self.set_interval(every, self.play_tick) if every is not None else None
        self._play_every = every

    @property
    def replay_screen(self) -> ReplayScreen | None:
        screen = self.monitor
        return screen if isinstance(screen, ReplayScreen) else None

    @property
    def window_s(self) -> float:
        screen = self.monitor
        return screen.window_s if screen is not None else DEFAULT_WINDOW

    def settings_at(self, tick: int) -> dict[str, str]:
        """The key settings in force at `tick`, as shown (re-read only when a change lies between)."""
        bucket = bisect_right(self._change_ticks, tick)
        if bucket != self._settings_bucket:
            self._settings_bucket = bucket
            self._settings = {s.name: setting_text(s.value, s.unit) for s in self.rec.settings(tick).values()}
        return self._settings

    def checkpoint_log(self) -> tuple[list[dict], list[tuple[float, str]]]:
        """Every checkpoint and too-frequent warning of the file, not just the charts' window
        (read again only when a followed file grew)."""
        count = self.rec.last_tick  # a lazy recording has not counted its ticks
        if self._ckpt_log_at != count:
            self._ckpt_log_at = count
            warnings = [(e.t, e.event.text) for e in self.rec.events(["note"]) if too_frequent(e.event.text)]
            self._ckpt_log = (self.rec.checkpoints(), warnings)
        return self._ckpt_log

    # --- feeding the history --------------------------------------------------------------------

    def _load_window(self, window_s: float | None = None) -> None:
        """History = the window of ticks ending at the position, read in one batched query."""
        p = self.player
        first = p.tick_since(p.t - (self.window_s if window_s is None else window_s))
        frames = self._window_frames.read(first, p.tick)  # what the last window shares with it is not read again
        self.history.clear()
        self.history.extend(frames)
        self.loaded_from = first

    def _moved(self, old_tick: int, now: bool = False) -> None:
        """After the position changed: push the ticks played over, or reload the window."""
        p = self.player
        if old_tick < p.tick <= old_tick + MAX_PUSH and len(self.history):
            played = self.rec.frames(old_tick + 1, p.tick, deferred=True)  # decoded where a pane reads them
            self.history.extend(self._window_frames.extend(played, p.tick_since(p.t - self.window_s)))
        else:  # back, far, or a seek to where we are (after a zoom): read the window again
            self._load_window()
        self.request_redraw(now=now)
        self._pace()

    @reading
    def window_changed(self) -> None:
        """Zoomed out past what is loaded: read the longer window."""
        p = self.player
        if self.history.t and self.history.t[0] > max(p.start_t, p.t - self.window_s) + 1e-6:
            self._load_window()
        self.request_redraw(now=True)

    @reading
    def play_tick(self) -> None:
        """The playback timer: follow the file, then move on by the real time since the last call."""
        now = self._clock()
        dt = 0.0 if self._last_clock is None else now - self._last_clock
        self._last_clock = now
        p = self.player
        if p.follow and (now - self._last_poll >= self.poll_s or not p.playing):  # paused: polls at poll_s
            self._last_poll = now
            if p.refresh():
                self.request_redraw()  # the scrubber's end moved
                if time.monotonic() - self._moments_at >= MOMENTS_EVERY_S or not p.follow:
                    self._find_moments()
        old = p.tick
        was_playing = p.playing
        if p.advance(dt):
            self._moved(old)
        if was_playing != p.playing:  # reached the end: show it stopped
            self.request_redraw(now=True)
        self._pace()

    # --- moments (thread worker, own connection) -------------------------------------------------

    def _find_moments(self) -> None:
        self._moments_at = time.monotonic()
        self._moments_worker(str(self.rec.path), self.player.follow)

    @work(thread=True, exclusive=True, group="moments", exit_on_error=False)
    def _moments_worker(self, path: str, follow: bool = False) -> None:
        from pgio_tui.store.timeline import open_recording

        # The moments read the whole file (~25 ms of CPU an hour): on this thread, but under the same
        # GIL as the UI, so they wait for the first frame, which they would otherwise hold up.
        self._first_drawn.wait(FIRST_FRAME_WAIT_S)
        with open_recording(path) as own:  # an older schema is migrated again, in this thread's memory
            moments = find_moments(own)
            # a finished file, or folder of rotated files: its findings are final (analysis/findings_out.py)
            if not follow:
                from pgio_tui.analysis.findings_out import with_findings
                moments = with_findings(moments, own)
        self.post_message(MomentsFound(moments))

    def _first_frame_drawn(self) -> None:
        super()._first_frame_drawn()
        self._first_drawn.set()

    def on_unmount(self) -> None:
        self._first_drawn.set()  # no first frame is coming: a waiting worker goes on (and ends)

    def on_moments_found(self, message: MomentsFound) -> None:
        self.player.moments = message.moments
        self.request_redraw(now=True)

    # --- actions --------------------------------------------------------------------------------

    @reading
    def action_play_pause(self) -> None:
        self.player.toggle()
        self._last_clock = self._clock()
        if self.player.at_start and self.history.last is not None and self.history.last.tick != self.player.tick:
            self._load_window()
        self.request_redraw(now=True)
        self._pace()

    def action_toggle_pause(self) -> None:  # the palette's "Pause / resume display"
        self.action_play_pause()

    @reading
    def action_step(self, n: int) -> None:
        old = self.player.tick
        self.player.step(n)
        self._moved(old, now=True)

    def action_faster(self) -> None:
        self.player.faster()
        self.request_redraw(now=True)

    def action_slower(self) -> None:
        self.player.slower()
        self.request_redraw(now=True)

    def action_home(self) -> None:
        self._seek(self.player.home)

    def action_end(self) -> None:
        self._seek(self.player.end)

    def seek_time(self, t: float) -> None:
        self._seek(lambda: self.player.seek_time(t))

    def seek_tick(self, tick: int) -> None:
        self._seek(lambda: self.player.seek_tick(tick))

    @reading
    def _seek(self, move: Callable[[], object]) -> None:
        old = self.player.tick
        move()
        if self.replay_screen is not None:
            self.replay_screen.note = ""
        self._last_clock = self._clock()
        self._moved(old, now=True)

    @reading
    def action_moment(self, direction: int) -> None:
        p = self.player
        old = p.tick
        m = p.next_moment() if direction > 0 else p.previous_moment()
        screen = self.replay_screen
        if m is None:
            what = "after" if direction > 0 else "before"
            self.notify(f"no event {what} this tick" + ("" if p.moments else " (still indexing)"), timeout=2)
            return
        if screen is not None:
            screen.note = f"{m.kind.replace('_', ' ')}: {m.text}"
        self._last_clock = self._clock()
        self._moved(old, now=True)

    def action_jump(self) -> None:
        from pgio_tui.tui.screens.dialogs import PromptScreen  # behind a key: not in the first frame's imports

        self.push_screen(PromptScreen("Jump to", "", hint=JUMP_HINT, placeholder="e.g. +5m"), self._jump)

    def _jump(self, text: str | None) -> None:
        if not text:
            return
        try:
            target = parse_jump(text, start_t=self.player.start_t, end_t=self.player.end_t, now_t=self.player.t)
        except ValueError as exc:
            self.notify(str(exc), severity="error", timeout=4)
            return
        self._seek(lambda: self.player.seek_nearest(target))

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand("Replay: jump to a time", JUMP_HINT + " (j)", self.action_jump)
        yield SystemCommand("Replay: next event", "Checkpoint, workload, annotation, gap, latency, Dirty (n)",
                            lambda: self.action_moment(1))
        yield SystemCommand("Replay: previous event", "(N)", lambda: self.action_moment(-1))
        yield SystemCommand("Replay: start", "First tick (g)", self.action_home)
        yield SystemCommand("Replay: end", "Last tick; follows a file still being written (G)", self.action_end)


_SIZE_UNITS = {"B": 1 / 1024, "kB": 1, "8kB": 8, "MB": 1024, "GB": 1024 ** 2}


def setting_text(value, unit: str | None) -> str:
    """A setting as people write it: 16384 x 8kB -> 128MB, 300 s -> 5min."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if unit in _SIZE_UNITS:
        kb = v * _SIZE_UNITS[unit]
        for name, size in (("GB", 1024 ** 2), ("MB", 1024), ("kB", 1)):
            if kb >= size and kb % size == 0:
                return f"{kb / size:g}{name}"
        return f"{kb:g}kB"
    if unit in ("s", "min", "ms"):
        secs = v * {"s": 1, "min": 60, "ms": 0.001}[unit]
        if secs >= 60 and secs % 60 == 0:
            return f"{secs / 60:g}min"
        return f"{secs:g}s" if secs >= 1 else f"{secs * 1000:g}ms"
    return f"{value}{unit or ''}" if unit and unit not in ("%",) else str(value)


def workload_text(rec) -> str:
    """The recording's workload(s), short: 'pgbench -c 8 -T 60 bench'."""
    from pgio_tui.workload_facts import workload_command
    return "; ".join(n for n in map(workload_command, rec.workloads()) if n)
