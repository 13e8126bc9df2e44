"""How replay looks, at 80x24 and 160x48, paused on the fixture recording (TZ fixed to UTC: the
timeline shows the recording's time of day). Update after a deliberate change with
`pytest tests/test_replay_snapshots.py --snapshot-update` and look at the SVGs."""

from __future__ import annotations


import pytest
from fixture_recording import START_T

from pgio_tui.store.reader import Recording
from pgio_tui.tui.replay import ReplayApp


pytestmark = pytest.mark.usefixtures("utc")

def make_app(path, tick=150):
    """Paused at `tick`; the Recording stays open for the app's life (the test process ends it)."""
    return ReplayApp(Recording(path), playing=False, start_t=START_T + tick, theme="pgio-dark", clock=lambda: 0.0)


async def moments_found(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.request_redraw(now=True)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_replay(snap_compare, fixture_file, size):
    assert snap_compare(make_app(fixture_file), terminal_size=size, run_before=moments_found)


def test_replay_after_next_event(snap_compare, fixture_file):
    """n: the position moves to the next checkpoint start and the timeline says what it is."""
    async def run_before(pilot):
        await moments_found(pilot)
        await pilot.press("n", "plus")
    assert snap_compare(make_app(fixture_file), terminal_size=(120, 40), run_before=run_before)
