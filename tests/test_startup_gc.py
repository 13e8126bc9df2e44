"""The cyclic collector the CLI pauses for start-up (pgio_tui/cli.py) comes back once the first
frame is drawn, and its collection of start-up's garbage waits until then: a collection holds the
GIL, so the thread that writes the frame to the terminal would wait on it (issue 13)."""

from __future__ import annotations

import gc

import pytest
from tui_support import wait_for

from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import GC_AFTER_FIRST_FRAME_S
from pgio_tui.tui.replay import ReplayApp


@pytest.mark.asyncio
async def test_the_collector_paused_for_start_up_comes_back_after_the_first_frame(fixture_file):
    seen = []
    gc.disable()  # as main() does for live and replay
    try:
        with Recording(fixture_file) as rec:
            app = ReplayApp(rec, playing=False)
            drawn = app._first_frame_drawn

            def first_frame_drawn():
                drawn()
                seen.append(gc.isenabled())

            app._first_frame_drawn = first_frame_drawn
            async with app.run_test(size=(80, 24)) as pilot:
                await wait_for(pilot, lambda: seen)
                assert seen == [False]  # the frame is out first; the collection comes after
                await wait_for(pilot, gc.isenabled, timeout=GC_AFTER_FIRST_FRAME_S + 10)
                assert gc.get_freeze_count() > 0  # start-up's objects: out of the collector's way
    finally:
        gc.enable()
        gc.unfreeze()
