"""The diff screen (`pgio-tui diff A B` without --format) driven by Pilot, and the pieces it draws with.

Fed by the two fixture recordings of test_diff_fixtures.py (A: backend_flush_after 0 on nvme0n1 /
nvme1n1; B: 2MB on sda / sdb), aligned on the workload: 29 s each, tps 100 vs 120, PGDATA util 50 vs
40 %, one checkpoint at x = 10..19 s in both.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console
from test_diff_fixtures import write_pair

from pgio_tui.analysis.compare import compare
from pgio_tui.frame import Frame
from pgio_tui.tui.diff_screen import DiffApp, DiffScreen, diff_app, grid_for
from pgio_tui.tui.screens.dialogs import HelpScreen
from pgio_tui.tui.diff_series import load_series
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.palette import build, chart_defaults
from pgio_tui.tui.plot import ChartCache, ChartSpec, Series, chart_lines
from pgio_tui.tui.widgets.diff_overlay_pane import (
    CHART_PANES,
    OverlayPane,
    axis_line,
    chart_templates,
    choice_for_row,
    span_line,
)
from pgio_tui.tui.widgets.diff_summary_table import SummaryTable


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    a, b = write_pair(tmp_path_factory.mktemp("diff"))
    return compare(a, b, "workload")


@pytest.fixture(scope="module")
def series(comparison):
    return load_series(comparison, chart_templates())


def text(lines) -> str:
    return "\n".join("".join(t for t, _ in line) for line in lines)


def rendered(renderable, width: int = 80) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def styles(lines) -> set:
    return {s for line in lines for _, s in line}


# --- the series on the aligned axis (Textual-free) --------------------------------------------------

def test_series_start_at_the_alignment_point(series):
    a, b = series.a.history, series.b.history
    assert a.t[0] == 0.0 and b.t[0] == 0.0 and a.t[-1] == b.t[-1] == 29.0 == series.length
    assert a.ticks[0] == 5 and b.ticks[0] == 2  # A idles 5 ticks first, B 2
    assert set(a.window("latency.tps", 0, 29).v) == {100.0}
    assert set(b.window("latency.tps", 0, 29).v) == {120.0}


def test_device_templates_resolve_to_each_runs_device(series):
    assert series.a.resolve("disk.{PGDATA}.util_pct") == "disk.nvme0n1.util_pct"
    assert series.b.resolve("disk.{PGDATA}.util_pct") == "disk.sda.util_pct"
    assert series.b.resolve("disk.{WAL}.w_await_ms") == "disk.sdb.w_await_ms"
    assert series.a.resolve("disk.{TBLSPC}.util_pct") is None  # no tablespace device


def test_series_module_is_textual_free():
    code = "import sys, pgio_tui.tui.diff_series; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_rows_name_their_chart(comparison):
    util = comparison.row("devices", "PGDATA util mean")
    c = choice_for_row(util)
    assert c.pair == ("disk.nvme0n1.util_pct", "disk.sda.util_pct") and c.row == ("disk.PGDATA.util_pct", "mean")
    above = choice_for_row(comparison.row("memory", "time Dirty > background threshold"))
    assert above.pair == ("mem.dirty_kb", "mem.dirty_kb")  # Dirty, with the threshold drawn
    assert above.hlines[0][0] == "mem.dirty_background_threshold_kb"
    assert choice_for_row(comparison.row("writes", "all sources")) is None
    assert choice_for_row(comparison.row("checkpoints", "count")).template == "checkpoint.progress"


# --- drawing pieces -----------------------------------------------------------------------------

def test_chart_draws_a_series_from_its_own_history():
    """plot.Series.history: two histories on one axis and one scale; the default is unchanged."""
    a, b = FrameHistory(), FrameHistory()
    for i in range(20):
        a.push(Frame(tick=i, t=float(i), elapsed=float(i), dt=1.0, values={"v": 10.0}))
        b.push(Frame(tick=i + 7, t=float(i), elapsed=float(i), dt=1.0, values={"v": 40.0}))
    spec = ChartSpec(series=(), legend=False)
    both = [Series("v", "A", "diff-a", history=a), Series("v", "B", "diff-b", history=b)]
    lines = chart_lines(spec, a, -0.5, 19, 30, 6, series=both, cache=ChartCache())
    assert lines[0][0][0].strip().startswith("50")  # one scale for both: 40 * 1.05 -> 50
    assert {"diff-a", "diff-b"} <= styles(lines)
    rows_a = [i for i, line in enumerate(lines) if any(s == "diff-a" for _, s in line)]
    rows_b = [i for i, line in enumerate(lines) if any(s == "diff-b" for _, s in line)]
    assert max(rows_b) < min(rows_a)  # B's 40 above A's 10
    assert Series("v", "A", "x").key == "v" and both[1].key == ("v", id(b))
    alone = chart_lines(ChartSpec(series=(Series("v", "A", "chart-1"),), legend=False), b, -0.5, 19, 30, 6)
    assert "chart-1" in styles(alone)  # no history given: the chart's own


def test_span_line_marks_both_runs(series):
    line = span_line(series.a, series.b, 30, 1.0)  # one cell per second
    cells = "".join(t for t, _ in line)[5:]
    assert cells[10:20] == "▀" * 10 and cells[:10].strip() == "" and cells[21:].strip() == ""
    assert "diff-both" in styles([line])  # both checkpoints run at x = 10..19


def test_axis_line_is_labelled_in_seconds():
    line = "".join(t for t, _ in axis_line(60, 0.5, 30.0))
    assert line.startswith(" x s└0s") and line.rstrip().endswith("30s")
    assert "15s" in line


def test_theme_defaults_colour_the_runs():
    d = chart_defaults({"primary": "#111111", "accent": "#222222"})
    assert d["diff-a"] == "#111111" and d["diff-b"] == "#222222"
    d = chart_defaults({"primary": "#111111", "accent": "#222222", "chart-1": "#333333", "chart-2": "#444444"})
    assert d["diff-a"] == "#333333" and d["diff-b"] == "#444444"
    pal = build({"background": "#000000", **d})
    assert pal["diff-both"].color is not None and pal["diff-both"].bgcolor is not None


def test_layout_by_size():
    assert grid_for(80, 24) == "column"
    assert grid_for(120, 40) == "grid2"
    assert grid_for(160, 48) == "grid3"


# --- the app ------------------------------------------------------------------------------------

def screen_of(app: DiffApp) -> DiffScreen:
    return app.diff_screen


@pytest.mark.asyncio
async def test_open_switch_tabs_and_quit(comparison):
    app = diff_app(comparison)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        scr = screen_of(app)
        assert scr.active_tab == "summary"
        table = scr.query_one(SummaryTable)
        assert app.focused is table
        assert scr.query_one("#summary-settings").styles.display == "none"  # no room at 80x24
        groups = comparison.groups()
        assert table.row_count == len(comparison.rows) + len(groups)
        await pilot.press("2")
        assert scr.active_tab == "charts"
        assert app.focused is scr.chart_panes[0]
        await pilot.press("tab")
        assert scr.active_tab == "settings"
        await pilot.pause()
        settings = rendered(scr.query_one("#settings-view").renderable_of())
        assert "backend_flush_after" in settings and "mq-deadline" in settings
        await pilot.press("tab")
        assert scr.active_tab == "summary"
        await pilot.press("shift+tab")
        assert scr.active_tab == "settings"
        await pilot.press("1")
        assert scr.active_tab == "summary"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@pytest.mark.asyncio
async def test_row_chart_follows_the_cursor(comparison):
    app = diff_app(comparison)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        scr = screen_of(app)
        chart = scr.row_chart
        assert chart.border_title == "latency: tps"
        assert "A 100.0" in chart.section_text("legend") and "B 120.0" in chart.section_text("legend")
        assert {"diff-a", "diff-b"} <= styles(chart._lines)
        await pilot.press("down")
        assert chart.border_title == "latency: mean"
        assert "changed" in chart.section_text("legend")
        table = scr.query_one(SummaryTable)
        target = next(i for i, (k, (r, _)) in enumerate(table.by_key.items())
                      if r is not None and r.name == "PGDATA util mean")
        table.move_cursor(row=target)
        await pilot.pause()
        assert chart.border_title == "devices: PGDATA util mean"
        legend = chart.section_text("legend")
        assert "A 50.00" in legend and "B 40.00" in legend and "-20.0 %" in legend


@pytest.mark.asyncio
async def test_chart_panes_overlay_both_runs_and_cycle_metrics(comparison):
    app = diff_app(comparison)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        scr = screen_of(app)
        assert scr.has_class("-wide") and scr.has_class("-grid3")
        side = rendered(scr.query_one("#side-settings").renderable_of())  # the settings beside the table
        assert scr.query_one("#summary-settings").styles.display == "block" and "backend_flush_after" in side
        await pilot.press("2")
        await pilot.pause()
        panes = scr.chart_panes
        assert [p.id for p in panes] == [f"chart-{k}" for k, _, _ in CHART_PANES]
        for pane in panes:
            assert {"diff-a", "diff-b"} <= styles(pane._lines), pane.id
            assert "ckpt│" in pane.section_text("chart") and "29s" in pane.section_text("chart")
        lat = scr.query_one("#chart-latency-m", OverlayPane)
        await pilot.press("right")
        assert app.focused is lat
        await pilot.press("down", "down")  # mean -> stddev -> tps
        assert lat.choice.label == "tps"
        assert "A 100.0" in lat.section_text("legend")
        dev = scr.query_one("#chart-devices", OverlayPane)
        assert [s.metric for s in dev._chart(dev.choice).series] == ["disk.nvme0n1.util_pct", "disk.sda.util_pct"]
        ckpt = scr.query_one("#chart-checkpoints", OverlayPane)
        assert "A 1 in the window (time 1)" in ckpt.section_text("text")  # as the Summary tab counts
        assert "B 1 in the window (wal 1)" in ckpt.section_text("text")


@pytest.mark.asyncio
async def test_help_theme_and_palette_commands(comparison):
    app = diff_app(comparison)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = dict(app.screen.keys)  # from the diff's bindings, not the monitor's
        assert keys["1-3"] == "show a tab: 1 Summary 2 Charts 3 Settings" and "← →" in keys
        assert keys["q"] == "quit" and "r" not in keys and "space" not in keys
        await pilot.press("escape")
        assert isinstance(app.screen, DiffScreen)
        before = app.theme
        await pilot.press("t")
        assert app.theme != before
        assert "diff-a" in app.theme_variables and "diff-b" in app.theme_variables
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Show Summary", "Show Charts", "Show Settings", "Next metric", "Next theme", "Help"):
            assert wanted in titles
        next(c for c in app.get_system_commands(app.screen) if c.title == "Show Charts").callback()
        await pilot.pause()
        assert app.diff_screen.active_tab == "charts"


@pytest.mark.asyncio
async def test_resize_reflows_the_charts(comparison):
    app = diff_app(comparison)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        scr = screen_of(app)
        await pilot.press("2")
        assert scr.grid == "column"
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert scr.grid == "grid3"
        assert all(p.size.height >= 15 for p in scr.chart_panes)


def test_diff_command_opens_the_screen(comparison, monkeypatch):
    """Without --format, `pgio-tui diff` hands the comparison to run_diff_screen."""
    from argparse import Namespace

    from pgio_tui.commands import diff as diff_cmd
    from pgio_tui.tui import diff_screen

    seen = {}

    def fake_run(self):
        seen["app"] = self
        self._return_code = 0

    monkeypatch.setattr(diff_screen.DiffApp, "run", fake_run)
    args = Namespace(a=str(comparison.a.path), b=str(comparison.b.path), align="workload", format=None)
    assert diff_cmd.run(args) == 0
    assert isinstance(seen["app"], DiffApp) and seen["app"].data.comparison.align == "workload"
