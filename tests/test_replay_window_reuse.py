"""A seek reuses the Frames its new window shares with the one before (store/window_frames.py): after
each kind of move (a tick back, a jump back and forward nearby, playback on, a zoom, a far seek, the
end of a file being written) the panes must show what a replay freshly opened at that position shows."""

from __future__ import annotations

import pytest
from fixture_recording import synthetic_frames, write_fixture
from tui_support import screen_text

from pgio_tui.store.reader import Recording
from pgio_tui.store.window_frames import WindowFrames
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.replay import ReplayApp

pytestmark = pytest.mark.usefixtures("utc")

SIZE = (160, 48)
HISTORY = ("t", "ticks", "series", "waits", "sources", "io", "events", "spans", "checkpoints", "checkpoint_warnings",
           "devices", "statements", "statement_texts", "backends", "last")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return write_fixture(tmp_path_factory.mktemp("reuse") / "r.pgio", n=1200)


class Fresh:
    """The panes of a replay opened at a tick, for comparison."""

    def __init__(self, path):
        self.path = path

    async def at(self, tick: int, zoom: int = 0) -> tuple[dict, list[str]]:
        with Recording(self.path, lazy=True) as rec:
            app = ReplayApp(rec, playing=False, start_t=rec.frame(tick).t)
            async with app.run_test(size=SIZE) as pilot:
                await app.workers.wait_for_complete()
                if zoom:
                    app.replay_screen.zoom(zoom)
                assert app.player.tick == tick
                return await shown(app, pilot)


async def shown(app, pilot) -> tuple[dict, list[str]]:
    await app.workers.wait_for_complete()
    app.request_redraw(now=True)
    await pilot.pause()
    return {k: getattr(app.history, k) for k in HISTORY}, screen_text(app)


def counted(app) -> list[tuple[int, int]]:
    """The (first, last) tick of every Recording.frames() read the app makes from now on."""
    reads: list[tuple[int, int]] = []
    frames = app.rec.frames

    def reading(first=None, last=None, **kw):
        reads.append((first, last))
        return frames(first, last, **kw)
    app.rec.frames = reading
    return reads


@pytest.mark.asyncio
async def test_a_window_from_reused_frames_is_the_fresh_window(recording):
    fresh = Fresh(recording)
    with Recording(recording, lazy=True) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            app.seek_tick(600)
            reads = counted(app)
            # (move, tick it lands on, whether the window is read again: else the ticks played over are added)
            for move, tick, reload in ((lambda: app.action_step(-1), 599, True), (lambda: app.seek_tick(560), 560, True),
                                       (lambda: app.seek_tick(700), 700, False),
                                       (lambda: app.action_step(-60), 640, True),
                                       (lambda: app.seek_tick(100), 100, True),  # far: nothing shared
                                       (lambda: app.seek_tick(1000), 1000, True)):
                reads.clear()
                move()
                assert app.player.tick == tick
                history, screen = await shown(app, pilot)
                fresh_history, fresh_screen = await fresh.at(tick)
                assert screen == fresh_screen, f"at tick {tick}"
                if reload:  # the history holds the window alone, as a replay opened there
                    assert history == fresh_history, f"at tick {tick}"
                if tick in (599, 560, 640):  # nearby, back: only the ticks the window did not hold are read
                    assert all(b - a < 60 for a, b in reads), reads
            app.replay_screen.zoom(1)  # a longer window: the ticks before the one held are read
            await pilot.pause()
            assert await shown(app, pilot) == await fresh.at(1000, zoom=1)


def test_window_frames_reads_only_what_it_does_not_hold(recording, monkeypatch):
    with Recording(recording) as rec:
        reads = []
        frames = rec.frames
        monkeypatch.setattr(rec, "frames", lambda a, b, **kw: reads.append((a, b)) or frames(a, b, **kw))
        w = WindowFrames(rec, kept=400)
        assert w.read(300, 600) == list(frames(300, 600)) and reads == [(300, 600)]
        assert w.read(250, 580) == list(frames(250, 580)) and reads[1:] == [(250, 299)]
        assert w.read(260, 650) == list(frames(260, 650)) and reads[2:] == [(581, 650)]
        assert w.read(900, 950) == list(frames(900, 950)) and reads[3:] == [(900, 950)]  # far: all of it
        w.extend(frames(951, 960), 910)  # playback on: the window moves with it
        assert [f.tick for f in w.frames] == list(range(910, 961))
        assert w.read(0, 500) and w.frames == []  # longer than kept: read whole, not kept


@pytest.mark.asyncio
async def test_a_followed_file_reads_its_new_ticks(tmp_path):
    """Frames held before the file grew stay those of their ticks: the windows after are fresh ones."""
    path = tmp_path / "growing.pgio"
    frames = list(synthetic_frames(700, incidents=False))
    with Recorder(path, meta={"interval_s": 1.0, "host": "writer"}) as writer:
        for f in frames[:500]:
            writer.write(f)
        writer.flush()
        with Recording(path, lazy=True) as rec:
            app = ReplayApp(rec, playing=False)
            async with app.run_test(size=SIZE) as pilot:
                await app.workers.wait_for_complete()
                assert app.player.follow
                app.seek_tick(450)
                for f in frames[500:]:
                    writer.write(f)
                writer.flush()
                assert app.player.refresh() == 200
                app.seek_tick(650)  # on into the new ticks: added to the window held
                app.action_step(-1)  # the window read again: the held Frames reused
                app._find_moments()  # the scrubber's marks of the new ticks too, as the fresh replay's
                assert await shown(app, pilot) == await Fresh(path).at(649)
