"""The Backends view (B): snapshots at 80x24 and 160x48 from an 18-like fixture recording (with
pg_stat_get_backend_io figures and AIO in flight), and its behaviour (sort, back, untrusted text
shown as plain text) with Pilot."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from fixture_recording import write_fixture
from pgio_tui.frame import BACKENDS_TOP
from pgio_tui.sources.backends import DENIED_NOTE, NOT_LOCAL_NOTE, io_key
from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import recording_app
from pgio_tui.tui.screens.backends import BackendsScreen, aio_line
from pgio_tui.tui.screens.monitor import MonitorScreen


@pytest.fixture(scope="module")
def fixture18(tmp_path_factory):
    return write_fixture(tmp_path_factory.mktemp("fixture18") / "fixture18.pgio", n=120, major=18)


def make_app(path):
    with Recording(path) as rec:
        return recording_app(rec, theme="pgio-dark")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_backends_view(snap_compare, fixture18, utc, size):
    assert snap_compare(make_app(fixture18), terminal_size=size, press=["B"])


def test_backends_view_pg17_sorted_by_write(snap_compare, fixture_file, utc):
    """17: no pg_stat_get_backend_io columns, no AIO; sorted by /proc write bytes."""
    assert snap_compare(make_app(fixture_file), terminal_size=(80, 24), press=["B", "o", "o"])


def test_waits_pane_names_aio_waits(snap_compare, fixture18, utc):
    """18: the Waits pane writes AIO's wait events as such (AIO IO:AioIoCompletion)."""
    assert snap_compare(make_app(fixture18), terminal_size=(80, 24), press=["6"])


@pytest.mark.asyncio
async def test_backends_keys_rows_and_plain_text(fixture18, utc):
    app = make_app(fixture18)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("B")
        screen = app.screen
        assert isinstance(screen, BackendsScreen)
        table = screen.query_one(DataTable)
        t, rows, aio = app.history.backends_at()
        assert 0 < table.row_count == len(rows) <= BACKENDS_TOP
        assert [int(k.value) for k in table.rows] == [b["pid"] for b in sorted(rows, key=lambda b: -io_key(b))]
        detail = str(screen.query_one("#bk-detail", Static).render())
        assert aio_line(aio, app.session.settings) in detail and "io_method worker, 3 io workers" in detail
        assert f"{sum(n for _, _, n in aio)} in flight" in detail
        await pilot.press("o", "o")  # write bytes
        assert screen.sort == 2
        order = [int(k.value) for k in table.rows]
        writes = {b["pid"]: b["write_bytes_s"] for b in rows}
        assert order == sorted(order, key=lambda p: -writes[p])
        if 4200 in order:  # the client whose application_name looks like markup and holds an escape byte
            cell = str(table.get_row("4200")[-1])
            assert "[red]psql[/]" in cell and "\x1b" not in cell
        await pilot.press("escape")
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("B")
        await pilot.press("B")
        assert isinstance(app.screen, MonitorScreen)


@pytest.mark.asyncio
async def test_hostile_application_name_is_plain_text(tmp_path, utc):
    """A backend whose application_name is markup with an escape byte: shown as typed, no ESC."""
    path = write_fixture(tmp_path / "f.pgio", n=60, major=18)
    app = make_app(path)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("B")
        screen = app.screen
        # walk back to a tick where the hostile client is among the recorded ones
        hostile = [(t, rows) for t, rows, _ in app.history.backends if any(b["pid"] == 4200 for b in rows)]
        assert hostile
        screen.at = lambda: hostile[-1][0]
        screen.redraw_view(force=True)
        await pilot.pause()
        cell = str(screen.query_one(DataTable).get_row("4200")[-1])
        assert "[red]psql[/]\\x1b[2J" in cell and "\x1b" not in cell


@pytest.mark.asyncio
@pytest.mark.parametrize("note, says", [(DENIED_NOTE, "run pgio-tui as root on the DB host"),
                                        (NOT_LOCAL_NOTE, "only on the database host")])
async def test_header_says_why_read_write_bytes_are_missing(fixture_file, utc, note, says):
    app = make_app(fixture_file)
    app.session.notes.append(note)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.press("B")
        assert says in str(app.screen.query_one("#bk-head", Static).render())


def test_aio_line_says_what_the_server_has():
    assert aio_line([], {}) == "AIO: PostgreSQL 18+ (pg_aios, io_method)"
    assert aio_line([], {"io_method": "sync"}) == "AIO io_method sync: none in flight"
    assert aio_line([("SUBMITTED", "readv", 3), ("SUBMITTED", "writev", 1), ("COMPLETED_IO", "readv", 2)],
                    {"io_method": "io_uring"}) == (
        "AIO io_method io_uring: 6 in flight · SUBMITTED readv 3, writev 1 · COMPLETED_IO readv 2")
