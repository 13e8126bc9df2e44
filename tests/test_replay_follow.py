"""Replay follows a recording while another process writes it: new ticks show as they arrive, and
following ends when the writer closes the file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tui_support import text_of, wait_for

from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.tui.replay import ReplayApp
from pgio_tui.tui.widgets.timeline import Timeline

TESTS = Path(__file__).resolve().parent
N, EVERY = 30, 0.2

WRITER = textwrap.dedent(f"""
    import sys, time
    sys.path[:0] = [{str(TESTS.parent)!r}, {str(TESTS)!r}]
    from fixture_recording import synthetic_frames
    from pgio_tui.store.writer import Recorder
    frames = list(synthetic_frames({N}, interval={EVERY}, incidents=False))
    with Recorder(sys.argv[1], meta={{"interval_s": {EVERY}, "host": "writer"}}) as rec:
        for f in frames:
            rec.write(f)
            rec.flush()  # one commit a tick, as a 1 Hz recording does at its pace
            time.sleep({EVERY})
""")


@contextmanager
def growing(path: Path) -> Iterator[Recording]:
    """A recording another process is writing (WRITER), open once it holds 3 ticks; the writer must
    have finished cleanly when the block ends."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    try:
        with open_when_ready(path, 3) as rec:
            yield rec
    finally:
        writer.wait(30)
    assert writer.returncode == 0


def open_when_ready(path: Path, ticks: int, timeout: float = 20) -> Recording:
    deadline = time.monotonic() + timeout
    while True:
        try:
            rec = Recording(path, lazy=True)  # as `replay` opens a file
            if rec.last_tick is not None and rec.last_tick >= ticks - 1:
                return rec
            rec.close()
        except RecordingError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the writer did not start")
        time.sleep(0.05)


@pytest.mark.asyncio
async def test_follows_a_file_being_written(tmp_path):
    with growing(tmp_path / "growing.pgio") as rec:
        app = ReplayApp(rec, playing=True, poll_s=0.2)
        assert app.player.follow and len(app.player) < N
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("G")  # to the end: play on as ticks arrive
            seen_following = False
            deadline = time.monotonic() + 30
            while app.player.follow and time.monotonic() < deadline:
                await pilot.pause(0.1)
                if "● following" in text_of(app.screen.query_one(Timeline)):
                    seen_following = True
            assert seen_following
            assert not app.player.follow, "the writer closed the file: following ends"
            await wait_for(pilot, lambda: app.history.last.tick == N - 1, timeout=15)
            ticks = app.history.ticks
            assert ticks == sorted(ticks) and len(ticks) == len(set(ticks))
            assert ticks[-(N - 5):] == list(range(5, N))  # every tick shown in turn, none skipped
            assert len(app.player) == N
            await wait_for(pilot, lambda: f"tick {N - 1} " in text_of(app.screen.query_one(Timeline)))


@pytest.mark.asyncio
async def test_a_paused_replay_follows_then_stands_still(tmp_path):
    """Paused, a file still being written is polled every poll_s, not play_hz times a second (its
    end moves on the timeline); once the writer has closed it, the playback timer stops: nothing
    is left to do until a key."""
    with growing(tmp_path / "growing.pgio") as rec:
        app = ReplayApp(rec, playing=False, poll_s=0.3)
        first = len(app.player)
        calls = []
        play_tick = app.play_tick
        app.play_tick = lambda: (calls.append(1), play_tick())  # what on_mount hands to set_interval
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: len(app.player) > first + 2, timeout=15)
            assert not app.player.playing and app.history.last.tick < first
            before = len(calls)
            await pilot.pause(1.0)
            assert app.player.follow and len(calls) - before <= 4  # at play_hz (10): about 10
            await wait_for(pilot, lambda: not app.player.follow, timeout=30)
            assert len(app.player) == N
            await pilot.pause(0.15)  # a wake already under way may still come
            before = len(calls)
            await pilot.pause(0.6)  # at 10 Hz: about 6 calls
            assert len(calls) == before
            await pilot.press("space")  # and it plays again
            await wait_for(pilot, lambda: len(calls) > before + 2, timeout=5)
            assert app.player.playing
