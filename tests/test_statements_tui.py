"""The Statements view (S): snapshots at 80x24 and 160x48 from the fixture recording, and its
behaviour (sort, back, untrusted text shown as plain text) with Pilot."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from fixture_recording import STATEMENT_COUNT, STATEMENT_EVERY
from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import recording_app
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.screens.statements import StatementsScreen, plain


def make_app(path):
    with Recording(path) as rec:
        return recording_app(rec, theme="pgio-dark")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_statements_view(snap_compare, fixture_file, utc, size):
    assert snap_compare(make_app(fixture_file), terminal_size=size, press=["S"])


def test_statements_view_sorted_by_reads(snap_compare, fixture_file, utc):
    assert snap_compare(make_app(fixture_file), terminal_size=(80, 24), press=["S", "o", "o", "o"])


@pytest.mark.asyncio
async def test_statements_keys_rows_and_plain_text(fixture_file, utc):
    app = make_app(fixture_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("S")
        screen = app.screen
        assert isinstance(screen, StatementsScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == STATEMENT_COUNT
        t, window, rows = app.history.statements[-1]
        assert window == STATEMENT_EVERY and [int(k.value) for k in table.rows] == [
            r["queryid"] for r in sorted(rows, key=lambda r: -r["time_ms_s"])]
        # the fixture's sixth text looks like markup and holds an escape byte: shown as typed, no ESC
        cells = [str(table.get_row(str(1005))[-1])]
        assert "[bold red]not markup[/]" in cells[0] and "\x1b" not in cells[0]
        await pilot.press("o")  # calls: the same order here (calls fall with the rank)
        await pilot.press("o", "o")  # reads
        assert screen.sort == 3
        order = [int(k.value) for k in table.rows]
        reads = {r["queryid"]: r["read_s"] for r in rows}
        assert order == sorted(order, key=lambda q: -reads[q])
        await pilot.press("escape")
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("S")
        await pilot.press("S")
        assert isinstance(app.screen, MonitorScreen)


def test_plain_removes_control_bytes_and_keeps_brackets():
    assert plain("SELECT\n  [b]x[/b]\x1b[2J\x07 FROM t") == "SELECT [b]x[/b]\\x1b[2J\\x07 FROM t"
    assert plain("x" * 50, 10) == "x" * 9 + "…"
