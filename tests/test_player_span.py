"""The player reads its (tick, time) index a span at a time (store/player.py): every move must land
where the whole index in memory (the slow path, `Whole` here) lands, on a file with gaps wider
than a span, a file that grows while it is followed, and a folder of rotated files with a restart;
and the replay window read at a seek is the same."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import pytest
from fixture_recording import START_T, synthetic_frames

from pgio_tui.store import player as player_mod
from pgio_tui.store.player import MAX, MAX_BATCH, Player
from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.store.rotation import Rotation, RotatingRecorder
from pgio_tui.store.timeline import Timeline
from pgio_tui.store.writer import Recorder

pytestmark = pytest.mark.usefixtures("utc")

SMALL_SPAN = 8  # spans of 8 tick numbers: every walk below crosses many, and gaps wider than one


@pytest.fixture(autouse=True)
def small_span(monkeypatch):
    monkeypatch.setattr(player_mod, "SPAN", SMALL_SPAN)


class Whole:
    """The slow path: every (tick, t) of the recording in two lists, moves as bisects over them."""

    def __init__(self, rec):
        rows = list(rec.rows([]))
        self.ticks, self.ts = [r[0] for r in rows], [r[1] for r in rows]

    def clamp(self, i: int) -> int:
        return max(0, min(len(self.ticks) - 1, i))

    def index(self, tick: int) -> int:
        return self.ticks.index(tick)

    def seek_tick(self, tick: int) -> int:
        return self.ticks[self.clamp(bisect_right(self.ticks, tick) - 1)]

    def seek_time(self, t: float) -> int:
        return self.ticks[self.clamp(bisect_right(self.ts, t) - 1)]

    def seek_nearest(self, t: float) -> int:
        i = bisect_left(self.ts, t)
        if i >= len(self.ts) or (i > 0 and t - self.ts[i - 1] <= self.ts[i] - t):
            i -= 1
        return self.ticks[self.clamp(i)]

    def step(self, tick: int, n: int) -> int:
        return self.ticks[self.clamp(self.index(tick) + n)]

    def since(self, tick: int, t: float) -> int:
        return self.ticks[min(self.index(tick), bisect_left(self.ts, t))]

    def play(self, tick: int, speed: float, dt: float) -> list[int]:
        """The ticks a player reaches, one advance() after another, until the end."""
        i, clock, out = self.index(tick), self.ts[self.index(tick)], []
        last = len(self.ticks) - 1
        while i < last:
            if speed == MAX:
                new = min(last, i + MAX_BATCH)
            else:
                clock += dt * speed
                new = min(bisect_right(self.ts, clock) - 1, i + MAX_BATCH, last)
                if new == i + MAX_BATCH:
                    clock = self.ts[new]
            i = max(i, new)
            out.append(self.ticks[i])
        return out


def play(p: Player, speed: float, dt: float) -> list[int]:
    p.playing, p.speed, out = True, speed, []
    while not p.at_end:
        p.advance(dt)
        out.append(p.tick)
    return out


def same_moves(rec, p: Player) -> None:
    """Every move of `p` against the whole index of `rec`."""
    w = Whole(rec)
    first, last = w.ticks[0], w.ticks[-1]
    for tick in range(first - 3, last + 4):
        assert p.seek_tick(tick) == w.seek_tick(tick), tick
    grid = [w.ts[0] - 5, *(t + d for t in w.ts[::3] for d in (-0.3, 0.0, 0.2, 0.5, 0.7)), w.ts[-1] + 5]
    for t in grid:
        assert p.seek_time(t) == w.seek_time(t), t
        assert p.t == w.ts[w.index(p.tick)]
        assert p.seek_nearest(t) == w.seek_nearest(t), t
    for start in w.ticks[::7] + [last]:
        for n in (1, -1, 5, -5, 60, -60, 10_000, -10_000):
            p.seek_tick(start)
            assert p.step(n) == w.step(start, n), (start, n)
        for window in (0.5, 3.0, 30.0, 1e6):
            p.seek_tick(start)
            assert p.tick_since(p.t - window) == w.since(start, p.t - window), (start, window)
            p.seek_tick(last)  # from far away: the span no longer holds the position's past
            p.seek_tick(start)
            assert p.tick_since(p.t - window) == w.since(start, p.t - window), (start, window)
    for start in (first, w.ticks[len(w.ticks) // 3]):
        for speed, dt in ((1.0, 0.7), (7.0, 0.3), (64.0, 0.25), (MAX, 0.1)):
            p.seek_tick(start)
            assert play(p, speed, dt) == w.play(start, speed, dt), (start, speed)
    assert p.home() == first and p.at_start and p.end() == last and p.at_end
    assert len(p) == len(w.ticks)


def write(path, frames, *, close: bool = True) -> Recorder:
    rec = Recorder(path, meta={"interval_s": 0.5})
    for f in frames:
        rec.write(f)
    rec.flush()
    if close:
        rec.close()
    return rec


def gappy_frames(n: int):
    """n ticks at 0.5 s with holes: one tick, a few, and two wider than a span."""
    holes = {5, 17, 18, 19, *range(40, 40 + 3 * SMALL_SPAN), *range(90, 91 + 5 * SMALL_SPAN)}
    return [f for f in synthetic_frames(n, interval=0.5, incidents=False) if f.tick not in holes]


@pytest.mark.parametrize("lazy", [True, False])
def test_span_moves_equal_the_whole_index(tmp_path, lazy):
    path = tmp_path / "gaps.pgio"
    write(path, gappy_frames(200))
    with Recording(path, lazy=lazy) as rec:
        p = Player(rec, playing=False)
        assert not p.follow and p.tick == 0
        same_moves(rec, p)


def test_a_followed_file_equals_the_whole_index_as_it_grows(tmp_path):
    """A lazy recording followed while this process writes it: after each refresh the player moves
    as the whole index of what is committed, and a player playing at the end plays on into it."""
    frames = gappy_frames(160)
    assert len(frames) == 91
    path = tmp_path / "growing.pgio"
    writer = write(path, frames[:30], close=False)
    with Recording(path, lazy=True) as rec:
        p = Player(rec, playing=False)
        assert p.follow
        p.end()
        p.playing = True
        reached = []
        bounds = (30, 31, 50, 75, len(frames))
        for a, b in zip(bounds, bounds[1:]):
            for f in frames[a:b]:
                writer.write(f)
            writer.flush()
            assert p.refresh() == b - a
            reached.append(p.advance(1000.0) and p.tick)  # at 1x, a long wait: as far as MAX_BATCH goes
            assert p.tick == Whole(rec).ticks[-1] and p.at_end
            same_moves(rec, p)
            p.end()
            p.playing = True
        assert reached == [frames[b - 1].tick for b in bounds[1:]]
        writer.close()
        p.refresh()
        assert not p.follow and rec.tick_count == len(frames)


def test_a_rotated_folder_with_a_restart_equals_the_whole_index(tmp_path):
    """Two recorders one after the other (a restart): the second file's numbers come after a gap
    of the time between, wider than a span."""
    folder = tmp_path / "always"
    for start in (START_T, START_T + 60):
        rec = RotatingRecorder(folder, Rotation(10.0), meta={"interval_s": 0.5}, now=lambda: start)
        for f in synthetic_frames(50, interval=0.5, start_t=start, incidents=False):
            rec.write(f)
        rec.close("stopped")
    with Timeline(folder) as t:
        assert len(t.files) >= 4
        ticks = [f.tick for f in t.frames()]
        assert max(b - a for a, b in zip(ticks, ticks[1:])) > SMALL_SPAN  # the restart's gap
        p = Player(t, playing=False)
        same_moves(t, p)


@pytest.mark.asyncio
async def test_the_replay_window_at_each_seek_equals_the_whole_index(tmp_path):
    """The history the replay screen holds after a seek: the ticks of the window ending at the
    position, as the whole index tells them."""
    from pgio_tui.tui.replay import ReplayApp

    path = tmp_path / "gaps.pgio"
    write(path, gappy_frames(200))
    with Recording(path, lazy=True) as rec:
        w = Whole(rec)
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=(120, 40)) as pilot:
            window = app.window_s
            for target in (150, 0, 60, 95, 139, 17, 199, 3):
                app.seek_tick(target)
                await pilot.pause()
                tick = w.seek_tick(target)
                assert app.player.tick == tick
                since = w.since(tick, w.ts[w.index(tick)] - window)
                assert app.history.ticks == [x for x in w.ticks if since <= x <= tick], target
                assert app.history.last.t == w.ts[w.index(tick)]


def test_a_lazy_recording_checks_the_ticks_it_reads(tmp_path):
    """Opened lazily, a file with a damaged time in the middle opens (the ends are checked), counts
    its ticks when asked, and refuses the damaged tick in one line when a read reaches it."""
    import sqlite3
    path = tmp_path / "damaged.pgio"
    write(path, gappy_frames(200))
    with sqlite3.connect(path) as c:
        c.execute("UPDATE ticks SET t = 1e300 WHERE tick = 150")
    with pytest.raises(RecordingError, match="tick 150 has no valid time"):
        Recording(path)
    with Recording(path, lazy=True) as rec:
        assert rec.tick_count == len(gappy_frames(200))
        p = Player(rec, playing=False)
        assert p.seek_tick(140) == 140  # its span ends before 150
        with pytest.raises(RecordingError, match="tick 150 has no valid time"):
            p.seek_tick(151)
        with pytest.raises(RecordingError, match="tick 150 has no valid time"):
            list(rec.frames(140, 160))


@pytest.mark.asyncio
async def test_replay_meets_a_damaged_tick_and_ends_in_one_line(tmp_path):
    import sqlite3

    from pgio_tui.tui.replay import ReplayApp
    path = tmp_path / "damaged.pgio"
    write(path, gappy_frames(200))
    with sqlite3.connect(path) as c:
        c.execute("UPDATE ticks SET t = 1e300 WHERE tick = 150")
    with Recording(path, lazy=True) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("G")
            await pilot.pause()
        assert app.error and "tick 150 has no valid time" in app.error and app.return_code == 1
