"""How the diff screen looks at 80x24 and 160x48, on the two fixture recordings of
test_diff_fixtures.py (aligned on the workload).

Deterministic: the recordings are written from fixed figures and the screen shows file names, not
paths, and no clock. Update after a deliberate change with
`pytest tests/test_tui_diff_snapshots.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import pytest
from test_diff_fixtures import write_pair

from pgio_tui.analysis.compare import compare
from pgio_tui.tui.diff_screen import diff_app


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    a, b = write_pair(tmp_path_factory.mktemp("diffsnap"))
    return compare(a, b, "workload")


@pytest.mark.parametrize("tab", ["1", "2", "3"], ids=["summary", "charts", "settings"])
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_diff_screen(snap_compare, comparison, size, tab):
    assert snap_compare(diff_app(comparison), terminal_size=size, press=[tab, "_"])


def test_row_chart_of_a_device_row(snap_compare, comparison):
    """The summary's chart follows the cursor: a PGDATA row, A's nvme0n1 against B's sda."""
    rows = [r for group in comparison.groups().values() for r in [None, *group]]
    target = next(i for i, r in enumerate(rows) if r is not None and r.name == "PGDATA util mean")
    assert snap_compare(diff_app(comparison), terminal_size=(80, 24), press=["down"] * (target - 1) + ["_"])


def test_light_theme(snap_compare, comparison):
    assert snap_compare(diff_app(comparison, theme="pgio-light"), terminal_size=(120, 40), press=["2", "_"])
