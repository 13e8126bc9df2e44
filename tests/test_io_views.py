"""The WAL (W) and Reads & cache (R) views: snapshots at 80x24 and 160x48 from the fixture recording,
their figures against the recording's own numbers, keys with Pilot, and their place in the help.
(The Devices pane's flush columns are in tests/test_tui_snapshots.py::test_compact_pane[4].)"""

from __future__ import annotations

import pytest

from pgio_tui import metrics as M
from pgio_tui.ratios import fpi_share, hit_ratio
from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import recording_app
from pgio_tui.tui.screens.dialogs import HelpScreen
from pgio_tui.tui.screens.io_view import IOViewScreen
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.widgets.reads_pane import ReadsPane
from pgio_tui.tui.widgets.wal_pane import WalPane


def make_app(path):
    with Recording(path) as rec:
        return recording_app(rec, theme="pgio-dark")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("key", ["W", "R"])
def test_io_view(snap_compare, fixture_file, utc, size, key):
    assert snap_compare(make_app(fixture_file), terminal_size=size, press=[key])


def _text(pane) -> str:
    return "\n".join("".join(t for t, _ in line) for line in pane._lines)


@pytest.mark.asyncio
async def test_views_show_the_recorded_figures_and_keys_switch(fixture_file, utc):
    app = make_app(fixture_file)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("W")
        assert isinstance(app.screen, IOViewScreen) and app.screen.view_name == "wal"
        wal = app.screen.query_one(WalPane)
        last = app.history.last.values
        text = _text(wal)
        share = fpi_share(last[M.WAL_FPI_S], last[M.WAL_RECORDS_S])
        assert f"({share * 100:.0f}% of records)" in text
        dev = app.history.last.devices["nvme1n1"]  # the fixture's WAL device
        assert "WAL by writer" in text and "client backend" in text  # 18: pg_stat_io object wal, with ms each
        assert "WAL device nvme1n1" in text and f"f/s {M.lookup(M.disk('x', M.DISK_F_S)).fmt(dev['f_s'])}" in text
        await pilot.press("R")  # the other view, straight away
        assert app.screen.view_name == "reads"
        reads = app.screen.query_one(ReadsPane)
        text = _text(reads)
        ratio = hit_ratio(last[M.DB_BLKS_READ_S], last[M.DB_BLKS_HIT_S])
        assert f"hit ratio {ratio * 100:.1f}%" in text
        assert "client backend" in text and "shared buffers used" in text and "page cache" in text
        # by source and context, with ms per operation; the pressure line's figures from the recorded rows
        assert "client backend (bulk)" in text and "autovacuum worker (vac)" in text and "ms/fsync" in text
        io = app.history.io_summary(app.screen.view().t0, app.screen.view().t1)
        evict = sum(r["evictions"] for (_b, obj, _c), r in io.items() if obj == "relation")
        hits = sum(r["hits"] for (_b, obj, _c), r in io.items() if obj == "relation")
        reads_ = sum(r["reads"] for (_b, obj, _c), r in io.items() if obj == "relation")
        assert f"shared_buffers evict {M.lookup(M.BUFFERS_EVICTIONS_S).fmt(evict)}/s" in text
        assert f"hit ratio {hit_ratio(reads_, hits) * 100:.1f}%" in text
        await pilot.press("R")
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("W", "escape")
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = dict(app.screen.keys)  # generated from the bindings: the views are listed
        assert shown["W"].startswith("WAL:") and shown["R"].startswith("Reads & cache:")


def test_sources_summary_is_the_window_mean_of_the_recorded_rows(fixture_file):
    with Recording(fixture_file) as rec:
        frames = list(rec.frames())
    from pgio_tui.tui.history import FrameHistory
    h = FrameHistory()
    h.extend(frames)
    t0, t1 = frames[-61].t, frames[-1].t
    got = h.sources_summary(t0, t1)
    inside = [f for f in frames if t0 <= f.t <= t1]
    span = inside[-1].t - inside[0].t
    want = sum((b.sources.get("client backend", {}).get("reads") or 0) * (b.t - a.t)
               for a, b in zip(inside, inside[1:])) / span
    assert got["client backend"]["reads"] == pytest.approx(want, rel=1e-12)


@pytest.mark.asyncio
async def test_every_extra_view_goes_the_one_way(fixture_file, utc):
    """Each view of tui/views.py: its key shows it over the monitor, another view's key switches
    (one view on the monitor, never a stack of them), its key again goes back."""
    from pgio_tui.tui.views import EXTRA_VIEWS

    app = make_app(fixture_file)
    async with app.run_test(size=(100, 30)) as pilot:
        for v, w in zip(EXTRA_VIEWS, EXTRA_VIEWS[1:] + EXTRA_VIEWS[:1]):
            await pilot.press(v.key)
            assert app.screen.extra_view is v and app.screen_stack[-2] is app.monitor
            await pilot.press(w.key)
            assert app.screen.extra_view is w and app.screen_stack[-2] is app.monitor
            await pilot.press(w.key)
            assert isinstance(app.screen, MonitorScreen)
