"""The monitor panes are one base (ChartPane) and a spec each, and the list of them (tui/panes.py)
is the one place their number keys, tabs, grid, help and vitals come from; the extra views are
one list too (tui/views.py)."""

from __future__ import annotations

import importlib

from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.panes import KEYS_SHOWN, PANES, pane_key
from pgio_tui.tui.screens.dialogs import HELP_READING
from pgio_tui.tui.screens.monitor import MonitorScreen, grid_css, grid_rows, layout_for
from pgio_tui.tui.views import EXTRA_VIEWS
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec


def test_monitor_panes_are_chart_panes_driven_by_their_spec():
    names = []
    for cls in PANES:
        assert issubclass(cls, ChartPane) and isinstance(cls.SPEC, PaneSpec)
        assert "__init__" not in vars(cls) and "sections" not in vars(cls), cls.__name__
        assert (cls.TITLE, cls.CATALOG_PANES) == (cls.SPEC.title, cls.SPEC.catalog_panes)
        assert cls.SPEC.layout in ("text-above", "text-below", "chart-above")
        assert cls.SPEC.name and cls.SPEC.short and cls.SPEC.help, cls.__name__  # what the list makes from it
        assert "vital" in vars(cls), cls.__name__  # each has its figure in the vitals line
        names.append(cls.SPEC.name)
    assert len(set(names)) == len(PANES)
    assert [pane_key(i) for i in range(len(PANES))] == ["1", "2", "3", "4", "5", "6"]


def test_keys_grid_and_help_follow_from_the_list():
    keys = [b for b in MonitorScreen.BINDINGS if b.action.startswith("show_pane")]
    assert [b.key for b in keys] == [pane_key(i) for i in range(len(PANES))]
    assert {b.key_display for b in keys} == {KEYS_SHOWN} == {"1-6"}
    css = grid_css()
    assert "grid-size: 3 2;" in css and "grid-size: 2 3;" in css  # six panes
    assert (grid_rows(3, 7), grid_rows(2, 7)) == (3, 4)  # a seventh pane: a third row, a fourth
    assert layout_for(160, 48) == "grid3" and layout_for(120, 40) == "grid2" and layout_for(80, 24) == "compact"
    panes_section = HELP_READING.split("[b]Panes[/b]")[1].split("[b]Views[/b]")[0]
    flat = " ".join(panes_section.split())
    for i, cls in enumerate(PANES):
        assert f"[b]{pane_key(i)} {cls.SPEC.title}[/b] {cls.SPEC.help}" in flat


def test_extra_views_are_one_list_with_a_screen_each():
    app_keys = {b.key: b for b in MonitorApp.BINDINGS}
    for v in EXTRA_VIEWS:
        b = app_keys[v.key]
        assert (b.action, b.id, b.tooltip) == (f"extra_view('{v.key}')", v.id, v.tooltip)
        module, name = v.screen.split(":")
        screen = getattr(importlib.import_module(module), name)
        assert "over" in vars(screen), name  # how the app opens it over the monitor's position
    assert [v.key for v in EXTRA_VIEWS] == ["S", "H", "B", "W", "R"]


def test_the_recipes_name_files_that_exist():
    """docs/architecture.md's "Add a pane" and "Add an extra view" name the files they touch:
    each one named (but the new ones, `<name>`) is there."""
    import re
    from pathlib import Path

    root = Path(__file__).parent.parent
    doc = (root / "docs" / "architecture.md").read_text()
    for title in ("### Add a pane", "### Add an extra view"):
        section = doc.split(title, 1)[1].split("\n### ", 1)[0]
        named = {p.split("::")[0] for p in re.findall(r"`([\w/<>.:]+\.py(?:::\w+)?)`", section) if "<name>" not in p}
        assert len(named) >= 5, (title, named)
        for path in named:
            assert any((base / path).is_file() for base in (root, root / "pgio_tui", root / "pgio_tui" / "tui")), \
                (title, path)
