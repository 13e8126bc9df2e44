"""What start-up puts after the first frame (issue 13: start to first frame): work that would hold
the GIL while the first frame is built waits for it, and still comes."""

from __future__ import annotations

import pytest
from tui_support import wait_for

import pgio_tui.tui.replay as replay
from pgio_tui.store.reader import Recording
from pgio_tui.tui.replay import ReplayApp


@pytest.mark.asyncio
async def test_replay_finds_its_moments_after_the_first_frame(fixture_file, monkeypatch):
    """The moments read the whole file (on a thread, but under the GIL): they are looked for once the
    first frame is drawn, and then arrive."""
    order = []
    find_moments = replay.find_moments

    def recorded_find_moments(rec):
        order.append("moments")
        return find_moments(rec)

    monkeypatch.setattr(replay, "find_moments", recorded_find_moments)
    with Recording(fixture_file) as rec:
        app = ReplayApp(rec, playing=False)
        drawn = app._first_frame_drawn

        def first_frame_drawn():
            order.append("first frame")
            drawn()

        app._first_frame_drawn = first_frame_drawn
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.player.moments)
            assert order == ["first frame", "moments"]
            assert app.player.moments == find_moments(rec)
