"""The checkpoint history (H): snapshots at 80x24 and 160x48 from the fixture recording, and with
Pilot: newest first, only checkpoints finished by the monitor's position, the server's
too-frequent warnings listed (as plain text), counters-only rows, replay reading the whole file."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from fixture_recording import CHECKPOINT_EVERY, synthetic_frames
from pgio_tui.frame import Event
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.app import MonitorApp, recording_app
from pgio_tui.tui.replay import ReplayApp
from pgio_tui.tui.screens.checkpoints import CheckpointsScreen, detail
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.session import SessionInfo

WARNING = "checkpoints are occurring too frequently (7 seconds apart)"


def make_app(path):
    with Recording(path) as rec:
        return recording_app(rec, theme="pgio-dark")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_checkpoints_view(snap_compare, fixture_file, utc, size):
    assert snap_compare(make_app(fixture_file), terminal_size=size, press=["H"])


def _frames(n=100):
    frames = list(synthetic_frames(n, incidents=False))
    frames[40].events.append(Event("note", WARNING + "\x1b[31m [b]x[/b]", {"seconds": 7}))
    frames[95].checkpoints.append({"start_t": frames[91].t, "end_t": frames[95].t, "kind": "[red]req",
                                   "buffers": 300, "buffers_pct": 1.8, "write_s": 0.5, "sync_s": 0.1,
                                   "source": "counters"})
    return frames


@pytest.mark.asyncio
async def test_checkpoints_rows_warnings_and_keys(utc):
    frames = _frames()
    done = [c for f in frames for c in f.checkpoints]
    app = MonitorApp(SessionInfo(), frames=frames, mode="replay")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("H")
        screen = app.screen
        assert isinstance(screen, CheckpointsScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == len(done) == 100 // CHECKPOINT_EVERY + 1
        assert [r["end_t"] for r in screen.rows] == sorted((c["end_t"] for c in done), reverse=True)
        cells = [str(c) for c in table.get_row_at(0)]
        assert "[red]req" in cells and "1.8" in cells  # the counters-only row, its text as typed
        assert cells[-1] == "-"  # no WAL file figures without the log line
        warnings = str(screen.query_one("#ckpt-warnings", Static).render())
        assert WARNING in warnings and "\\x1b[31m [b]x[/b]" in warnings and "\x1b" not in warnings
        text = str(screen.query_one("#ckpt-detail", Static).render())
        assert "from counters" in text
        await pilot.press("down")
        text = str(screen.query_one("#ckpt-detail", Static).render())
        assert "sync files 41, longest 0.112 s" in text and "WAL files added/removed/recycled 0/1/3" in text
        await pilot.press("escape")
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("H", "H")
        assert isinstance(app.screen, MonitorScreen)


def test_detail_of_a_log_row():
    row = {"kind": "wal", "log_buffers": 8241, "buffers": 8000, "buffers_pct": 50.3, "write_s": 17.9,
           "sync_s": 0.4, "total_s": 18.5, "sync_files": 41, "longest_s": 0.112, "average_s": 0.009,
           "distance_kb": 301_234, "estimate_kb": 320_000, "wal_added": 0, "wal_removed": 1,
           "wal_recycled": 3, "source": "log"}
    text = detail(row)
    assert "8,241 buffers (50.3% of shared_buffers)" in text  # the log's own count wins
    assert "write 17.9 s, sync 0.400 s, total 18.5 s" in text and "distance 294M, estimate 312M" in text


@pytest.mark.asyncio
async def test_replay_lists_checkpoints_before_the_charts_window(tmp_path, utc):
    path = tmp_path / "r.pgio"
    frames = _frames(900)
    total = len([c for f in frames for c in f.checkpoints])
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in frames:
            rec.write(f)
    with Recording(path) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=(80, 24)) as pilot:
            app.seek_tick(890)
            await pilot.pause()
            assert len(app.history.checkpoints) < total  # the charts' window only
            await pilot.press("H")
            screen = app.screen
            assert isinstance(screen, CheckpointsScreen)
            assert screen.query_one(DataTable).row_count == len([
                c for f in frames[:891] for c in f.checkpoints]) == total - 1  # the last ends at 894
            assert WARNING in str(screen.query_one("#ckpt-warnings", Static).render())
            app.seek_tick(60)  # back: only what had finished by then
            await pilot.pause()
            screen.redraw_view()
            assert screen.query_one(DataTable).row_count == 2
