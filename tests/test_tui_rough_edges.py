"""Rough edges a newcomer met (issue "Newcomer II"): replay's degraded list holds only what is
degraded, a short recording fills the charts, and text that was cut or said two ways."""

from __future__ import annotations

import pytest
from fixture_recording import META, SETTINGS, START_T, synthetic_frames
from tui_support import text_of

from pgio_tui.frame import Event
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.replay import ReplayApp
from pgio_tui.tui.screens.dialogs import HelpScreen
from pgio_tui.tui.screens.monitor import DEFAULT_WINDOW, fitted_window
from pgio_tui.tui.session import session_from_recording
from pgio_tui.tui.widgets.status import StatusBar
from pgio_tui.workload_facts import PGBENCH_INIT_DONE

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
DEGRADED = "pg_stat_statements is not installed in this database: no statement figures"


def record(path, frames):
    """The frames recorded to `path` with the fixture's metadata and settings."""
    with Recorder(path, meta=dict(META)) as rec:
        rec.set_settings(SETTINGS)
        for f in frames:
            rec.write(f)
        rec.close("done", t=frames[-1].t + 0.5)
    return path


def short_recording(path, n: int = 20):
    """`n` ticks of a pgbench run: its init's end as an old recording has it (a bare note), pgio's
    start as a workload marks it now, and one real degradation."""
    frames = list(synthetic_frames(n, incidents=False))
    frames[2].events.append(Event("note", PGBENCH_INIT_DONE))
    frames[3].events.append(Event("note", "pgio run started: 2 session(s)", {"workload": "pgio"}))
    frames[4].events.append(Event("note", DEGRADED))
    return record(path, frames)


def test_replay_lists_only_what_is_degraded(tmp_path):
    with Recording(short_recording(tmp_path / "s.pgio")) as rec:
        notes = session_from_recording(rec).notes
    assert DEGRADED in notes
    assert not any("pgbench -i" in n or "pgio run started" in n for n in notes), notes


@SIZES
@pytest.mark.asyncio
async def test_replay_help_and_window_of_a_short_recording(tmp_path, size):
    with Recording(short_recording(tmp_path / "s.pgio")) as rec:
        app = ReplayApp(rec, playing=False, start_t=START_T + 19)
        async with app.run_test(size=size) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            screen = app.monitor
            assert screen.window_s == fitted_window(19) == 20  # the 19 s recording fills the charts
            header = text_of(screen.query_one(StatusBar))
            assert "⧗20s" in header
            await pilot.press("2")  # writes: a rate every tick
            await pilot.pause()
            chart = [ln.split("┤", 1)[1] for ln in text_of(screen.panes[1]).splitlines() if "┤" in ln]
            assert chart and chart[-1][:4].strip() and chart[-1][-4:].strip(), chart  # edge to edge
            await pilot.press("z")  # zoomed: the user's window from now on
            assert (screen.window_s, screen.fitted) == (10, False)
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            listed = str(app.screen.query_one("#help-degraded").render())
            assert "degraded (1)" in listed and DEGRADED in listed.replace("\n", " ")
            assert "pgbench -i done" not in listed


def test_the_window_fits_what_is_shorter_than_the_default():
    assert [fitted_window(s) for s in (0, 9, 19, 25, 45, 90, 299, 300, 3600)] == \
        [10, 10, 20, 30, 60, 120, 300, 300, 300]
    assert DEFAULT_WINDOW == 300


def _help_lines(app) -> tuple[list[str], int]:
    """The help's lines of keys and notes as laid out, and the width its box gives them (its
    scrollbar taken off); the degraded list is server text Textual wraps."""
    box = app.screen.query_one("VerticalScroll")
    lines = [ln for w in box.query("Static") if w.id != "help-degraded" for ln in str(w.render()).splitlines()]
    return [ln for ln in lines if "pgio-tui/themes" not in ln], box.scrollable_content_region.width  # a path is a path


@SIZES
@pytest.mark.asyncio
async def test_help_lines_wrap_under_themselves(tmp_path, size):
    """At 80 x 24 the help scrolls: its scrollbar takes two columns, and a line laid out for the
    box without it ran back to column 0 ("AIO in flight" / "(o:")."""
    with Recording(short_recording(tmp_path / "s.pgio")) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=size) as pilot:
            await pilot.press("question_mark")
            await pilot.pause()
            lines, width = _help_lines(app)
            assert len(lines) > 40 and width >= 74
            assert [ln for ln in lines if len(ln) > width] == []
            assert "B Backends: per process I/O, state and wait; AIO in flight (o: sort, esc: back)" in \
                " ".join(" ".join(lines).split())  # the line that was cut, whole
            assert "obs A/B ms the last tick's collection took A ms, B of them in the server's query" in \
                " ".join(" ".join(lines).split())  # the header's figures, explained where the keys are
            await pilot.press("escape")
            assert "obs A/B ms: the last tick's collection" in str(app.monitor.query_one(StatusBar).tooltip)


@pytest.mark.asyncio
async def test_diff_help_fits_80_columns(tmp_path):
    from pgio_tui.tui.diff_screen import DIFF_KEYS_NOTE, DIFF_READING
    from pgio_tui.tui.screens.dialogs import HELP_WIDTH, help_text

    lines = [ln for ln in str(help_text([("q", "quit")], DIFF_KEYS_NOTE, DIFF_READING)).splitlines()
             if "pgio-tui/themes" not in ln]
    assert "Reading the diff" in lines and max(map(len, lines)) <= HELP_WIDTH


def test_headless_and_tui_say_dirty_and_rates_alike(capsys):
    """The headless status line and the TUI's vitals write Dirty with the one formatter (461M, not
    385700kB), and a rate that rounds to 1 as 1, beside a 0."""
    from pgio_tui import format as fmt
    from pgio_tui import metrics as M
    from pgio_tui.headless import StatusLine
    from pgio_tui.tui.history import FrameHistory
    from pgio_tui.tui.session import SessionInfo
    from pgio_tui.tui.widgets.pane import View
    from pgio_tui.tui.widgets.status import Vitals

    frames = list(synthetic_frames(5, incidents=False))
    last = frames[-1]
    last.values[M.MEM_DIRTY_KB] = 472064.0
    last.values[M.WRITES_CHECKPOINTER] = 0.999
    last.values[M.WRITES_BACKEND] = 0.0
    StatusLine(enabled=True).show(last, "x.pgio")
    headless = capsys.readouterr().err
    h = FrameHistory()
    h.extend(frames)
    vitals = "".join(t for t, _ in Vitals.line(View(h, SessionInfo(), h.end_t - 60, h.end_t), 300))
    assert fmt.kib(472064.0) == "461M"
    assert "dirty 461M" in headless and "dirty 461M" in vitals and "kB" not in headless
    assert "ckpt 1 backend 0" in vitals


def _no_buffercache(path):
    """A recording whose server had no pg_buffercache (before 16, or no extension)."""
    from pgio_tui import metrics as M

    frames = list(synthetic_frames(20, incidents=False))
    for f in frames:
        f.values.pop(M.BUFFERS_USED, None)
        f.values.pop(M.BUFFERS_DIRTY, None)
    return record(path, frames)


@SIZES
@pytest.mark.asyncio
async def test_reads_view_and_jump_hint_are_whole(tmp_path, size):
    """At 80 columns the R view's buffer-cache line and the jump dialog's hint were cut
    ("CREATE EXTENSION", "(ela")."""
    from tui_support import screen_text

    with Recording(_no_buffercache(tmp_path / "n.pgio")) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=size) as pilot:
            await app.workers.wait_for_complete()
            await pilot.press("R")
            await pilot.pause()
            line = next(ln for ln in screen_text(app) if "shared buffers" in ln)
            assert "not read yet, or no pg_buffercache (16+, CREATE EXTENSION)" in line
            await pilot.press("escape", "j")
            await pilot.pause()
            shown = " ".join(" ".join(ln.strip(" │") for ln in screen_text(app)).split())
            assert "hh:mm:ss (time of day) · +5m / -30s (from here) · 90s, 5m, 1:30 (elapsed)" in shown


@pytest.mark.asyncio
async def test_backends_view_shows_wait_events_whole_when_wide(tmp_path):
    from fixture_recording import write_fixture
    from textual.widgets import DataTable

    from pgio_tui.tui.app import recording_app

    with Recording(write_fixture(tmp_path / "b.pgio", n=60, major=18)) as rec:
        app = recording_app(rec, theme="pgio-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("B")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        waits = [str(table.get_cell(k, "wait")) for k in table.rows]
        assert "Activity:WalWriterMain" in waits and not any(w.endswith("…") for w in waits)
