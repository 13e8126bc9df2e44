"""The six monitor panes are one base (ChartPane) and a spec each, not six copies of the drawing code."""

from __future__ import annotations

from pgio_tui.tui.screens.monitor import PANES
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec


def test_monitor_panes_are_chart_panes_driven_by_their_spec():
    keys = []
    for _name, _short, cls in PANES:
        assert issubclass(cls, ChartPane) and isinstance(cls.SPEC, PaneSpec)
        assert "__init__" not in vars(cls) and "sections" not in vars(cls), cls.__name__
        assert (cls.KEY, cls.TITLE, cls.CATALOG_PANES) == (cls.SPEC.key, cls.SPEC.title, cls.SPEC.catalog_panes)
        assert cls.SPEC.layout in ("text-above", "text-below", "chart-above")
        keys.append(cls.KEY)
    assert keys == ["1", "2", "3", "4", "5", "6"]
