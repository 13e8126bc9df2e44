"""How the monitor looks, at 80x24 and 160x48, fed from the fixture recording.

Deterministic: the frames, host and settings come from tests/fixture_recording.py and nothing on
screen reads the wall clock (times are relative to the newest frame). Update after a deliberate
change with `pytest tests/test_tui_snapshots.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import pytest

from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import recording_app


def make_app(path, theme="pgio-dark"):
    with Recording(path) as rec:
        return recording_app(rec, theme=theme)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_monitor(snap_compare, fixture_file, size):
    assert snap_compare(make_app(fixture_file), terminal_size=size)


@pytest.mark.parametrize("pane", ["2", "3", "4", "5", "6"])
def test_compact_pane(snap_compare, fixture_file, pane):
    """Every pane reachable at 80x24 (tabs)."""
    assert snap_compare(make_app(fixture_file), terminal_size=(80, 24), press=[pane])


def test_light_theme(snap_compare, fixture_file):
    assert snap_compare(make_app(fixture_file, theme="pgio-light"), terminal_size=(120, 40))
