"""Replay driven by Pilot on the fixture recording: every control lands on the right tick, and the
frame the panes show is that tick's frame. Playback runs on a fake clock, so "3.5 s of play at 1x"
means exactly that, however busy the machine is."""

from __future__ import annotations


import pytest
from fixture_recording import START_T
from tui_support import text_of, wait_for

from pgio_tui.store.player import MAX
from pgio_tui.store.reader import Recording
from pgio_tui.tui.replay import ReplayApp, ReplayScreen, setting_text
from pgio_tui.tui.screens.dialogs import PromptScreen
from pgio_tui.tui.widgets.timeline import Timeline, column_of, scrubber_line, time_at


pytestmark = pytest.mark.usefixtures("utc")

class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def shown(app: ReplayApp) -> int:
    """The tick the panes draw: the newest frame in the history, checked against the player."""
    last = app.history.last
    assert last is not None and last.tick == app.player.tick
    return last.tick


def assert_frame(app: ReplayApp, rec: Recording, tick: int) -> None:
    assert shown(app) == tick
    want = rec.frame(tick)
    assert app.history.last.values == want.values and app.history.last.t == want.t
    assert f"tick {tick} " in text_of(app.screen.query_one(Timeline))


async def drawn(app, pilot, tick: int) -> None:
    """Playback redraws at most REDRAW_HZ times a second: wait for the timeline to show `tick`."""
    await wait_for(pilot, lambda: f"tick {tick} " in text_of(app.screen.query_one(Timeline)), timeout=5)


async def settle(app, pilot):
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.asyncio
async def test_step_seek_moments_and_speed(fixture_file):
    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 150, clock=FakeClock())
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert isinstance(app.screen, ReplayScreen)
            assert_frame(app, rec, 150)
            assert app.history.t[0] >= START_T + 150 - 300 - 1  # the window behind the position
            await pilot.press("right")
            assert_frame(app, rec, 151)
            await pilot.press("left", "left", "left")
            assert_frame(app, rec, 148)
            await pilot.press("G")
            assert_frame(app, rec, 299)
            await pilot.press("g")
            assert_frame(app, rec, 0)
            await pilot.press("shift+right")
            assert_frame(app, rec, 62)  # 60 ticks on: 40 and 41 are a gap
            app.seek_tick(39)
            await pilot.press("right")
            assert_frame(app, rec, 42)  # one step jumps the gap
            await pilot.press("left")
            assert_frame(app, rec, 39)
            # next / previous event
            await pilot.press("n")
            assert_frame(app, rec, 42)
            assert "gap" in app.replay_screen.note
            await pilot.press("n")
            assert_frame(app, rec, 54)  # checkpoint end
            await pilot.press("N", "N")
            assert_frame(app, rec, 35)  # back over the gap to the checkpoint start
            assert "checkpoint start" in app.replay_screen.note
            # speed
            assert app.player.speed == 1.0
            await pilot.press("plus", "right_square_bracket")
            assert app.player.speed == 4.0
            await pilot.press("minus", "left_square_bracket", "left_square_bracket")
            assert app.player.speed == 0.5
            for _ in range(12):
                await pilot.press("plus")
            assert app.player.speed == MAX and "max" in text_of(app.screen.query_one(Timeline))


@pytest.mark.asyncio
async def test_play_pause_at_speed(fixture_file):
    clock = FakeClock()
    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 100, clock=clock)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            assert_frame(app, rec, 100)
            clock.now += 5  # paused: time passes, nothing moves
            await pilot.pause(0.25)
            assert_frame(app, rec, 100)
            await pilot.press("space")
            assert app.player.playing and "▶" in text_of(app.screen.query_one(Timeline))
            clock.now += 3.5
            await wait_for(pilot, lambda: app.player.tick == 103, timeout=5)
            await drawn(app, pilot, 103)
            assert_frame(app, rec, 103)
            await pilot.press("plus", "plus")  # 4x
            clock.now += 2.5  # 10 recording seconds
            await wait_for(pilot, lambda: app.player.tick == 113, timeout=5)
            await pilot.press("space")
            assert not app.player.playing
            clock.now += 10
            await pilot.pause(0.25)
            assert_frame(app, rec, 113)
            # the history holds every tick played over, in order
            assert app.history.ticks[-14:] == list(range(100, 114))
            # max speed runs to the end of a closed recording and pauses there
            for _ in range(8):
                await pilot.press("plus")
            await pilot.press("space")
            await wait_for(pilot, lambda: not app.player.playing, timeout=10)
            await drawn(app, pilot, 299)
            assert_frame(app, rec, 299)


def counted(app: ReplayApp) -> ReplayApp:
    """`app` with its playback timer's calls counted (in app.calls)."""
    play_tick = app.play_tick
    app.calls = 0

    def counting() -> None:
        app.calls += 1
        play_tick()
    app.play_tick = counting  # what on_mount hands to set_interval
    return app


async def timer_calls(app, pilot, seconds: float = 0.6) -> int:
    """How often the playback timer fired in `seconds` of real time (at 10 Hz: about 6)."""
    before = app.calls
    await pilot.pause(seconds)
    return app.calls - before


@pytest.mark.asyncio
async def test_a_standing_replay_does_not_wake(fixture_file):
    """Paused, or at the end of a closed file, the playback timer stops (it fired 10 times a
    second for nothing); playing starts it again, and playback still runs to the end."""
    clock = FakeClock()
    with Recording(fixture_file, lazy=True) as rec:
        app = counted(ReplayApp(rec, playing=False, start_t=START_T + 100, clock=clock))
        assert not app.player.follow  # a closed recording: nothing to poll for
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            assert await timer_calls(app, pilot) <= 1  # paused from the start
            await pilot.press("space")
            assert await timer_calls(app, pilot) >= 3  # playing
            clock.now += 2
            await wait_for(pilot, lambda: app.player.tick == 102, timeout=5)
            await pilot.press("space")
            await pilot.pause(0.15)  # a wake already under way may still come
            assert await timer_calls(app, pilot) == 0
            clock.now += 10  # paused: time passes, nothing moves
            await pilot.press("right")  # a step keeps it paused
            assert_frame(app, rec, 103)
            assert await timer_calls(app, pilot) == 0
            for _ in range(8):
                await pilot.press("plus")  # max speed: to the end of the closed file, where it pauses
            await pilot.press("space")
            await wait_for(pilot, lambda: not app.player.playing, timeout=10)
            await drawn(app, pilot, 299)
            assert_frame(app, rec, 299)
            await pilot.pause(0.15)
            assert await timer_calls(app, pilot) == 0


@pytest.mark.asyncio
async def test_jump_dialog_and_click(fixture_file):
    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 100, clock=FakeClock())
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("j")
            assert isinstance(app.screen, PromptScreen)
            await pilot.press(*"+1m", "enter")
            assert_frame(app, rec, 160)
            await pilot.press("j", *"-30s", "enter")
            assert_frame(app, rec, 130)
            await pilot.press("j", *"1:30", "enter")
            assert_frame(app, rec, 90)
            await pilot.press("j", *"22:15:00", "enter")  # START_T is 22:13:20 UTC
            assert_frame(app, rec, 100)
            await pilot.press("j", *"nonsense", "enter")
            assert_frame(app, rec, 100)  # an error toast, no move
            timeline = app.screen.query_one(Timeline)
            width = timeline.size.width
            x = column_of(START_T + 200, START_T, rec.end_t, width)
            await pilot.click(Timeline, offset=(x, 1))
            want = rec.tick_at(time_at(x, app.player.start_t, app.player.end_t, width))
            assert_frame(app, rec, want)
            assert abs(want - 200) <= 3
            await pilot.click(Timeline, offset=(0, 1))
            assert_frame(app, rec, 0)


@pytest.mark.asyncio
async def test_header_says_where_and_how_fast(fixture_file):
    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 150, clock=FakeClock())
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            header = text_of(app.screen.query_one("#status"))
            assert "fixture-host" in header and "PG 17.2" in header and "⏸ 1× 2:30/4:59" in header
            info = text_of(app.screen.query_one(Timeline)).splitlines()[0]
            assert "22:15:50" in info and "pgbench -c 8 -T 300 bench" in info
            assert "sb 128MB" in info and "cpt 5min" in info and "bfa 2MB" in info  # in force at tick 150
            app.seek_tick(10)
            await pilot.pause()
            assert "bfa 0kB" in text_of(app.screen.query_one(Timeline))  # before the change at tick 20


@pytest.mark.asyncio
async def test_zoom_out_reads_the_longer_window(fixture_file):
    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 290, clock=FakeClock())
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("z", "z")
            assert app.monitor.window_s == 60
            app.seek_tick(290)  # a seek reads the window zoomed to
            assert 225 <= app.history.ticks[0] <= 231
            await pilot.press("Z", "Z", "Z")
            assert app.monitor.window_s == 600
            assert app.history.ticks[0] == 0 and shown(app) == 290


def test_scrubber_marks_and_cursor():
    from pgio_tui.store.moments import Moment
    line = scrubber_line(11, 0.0, 10.0, 5.0, [Moment(2, 2.0, "checkpoint_start", ""), Moment(2, 2.0, "gap", ""),
                                             Moment(8, 8.0, "annotation", "")])
    text = "".join(t for t, _ in line)
    assert text == "━━╳━━●──▲──"
    assert time_at(5, 0.0, 10.0, 11) == 5.0 and column_of(10.0, 0.0, 10.0, 11) == 10


@pytest.mark.parametrize("value, unit, text", [
    ("16384", "8kB", "128MB"), ("300", "s", "5min"), ("1024", "MB", "1GB"), ("0", "8kB", "0kB"),
    ("0.9", None, "0.9"), ("200", "ms", "200ms"), ("none", None, "none")])
def test_setting_text(value, unit, text):
    assert setting_text(value, unit) == text


@pytest.mark.asyncio
async def test_keys_footer_and_help_follow_what_the_source_can_do(fixture_file):
    """A recording can seek, not record, annotate or launch: r, m and w do nothing (no prompt, no
    toast), are out of the footer and the palette, and the help lists the replay keys instead."""
    from pgio_tui.tui.screens.dialogs import HelpScreen
    from pgio_tui.tui.widgets.footer import FooterBar

    with Recording(fixture_file, lazy=True) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 150, clock=FakeClock())
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await settle(app, pilot)
            screen = app.screen
            await pilot.press("r", "m", "w")
            assert app.screen is screen and not app._notifications
            footer_keys = {b.binding.key for b in screen.active_bindings.values() if b.enabled and b.binding.show}
            assert {"r", "m", "w"}.isdisjoint(footer_keys) and "space" in footer_keys
            shown = {key.key for key in screen.query_one(FooterBar).keys}
            assert {"r", "m", "w"}.isdisjoint(shown) and "space" in shown
            titles = [c.title for c in app.get_system_commands(screen)]
            assert "Start / stop recording" not in titles and "Start workload…" not in titles
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            keys = dict(app.screen.keys)
            assert keys["space"] == "play / pause" and "j" in keys and "n/N" in keys
            assert not {"r", "m", "w", "s"} & set(keys)
            assert not any(t.startswith(("start / stop recording", "add an annotation", "start a workload"))
                           for t in keys.values())
            assert keys["1-6"].startswith("show / focus a pane: 1 Ckpt 2 Writes")
