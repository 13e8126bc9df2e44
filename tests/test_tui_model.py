"""The Textual-free half of the TUI: FrameHistory, the braille chart lines, value formats, themes, session."""

from __future__ import annotations

import re

import pytest
from fixture_recording import CHECKPOINT_EVERY, CHECKPOINT_LENGTH, synthetic_frames, write_fixture

from pgio_tui.frame import Event, Frame
from pgio_tui.store.reader import Recording
from pgio_tui import format as fmt
from pgio_tui.tui.drawing import bar, nice_ceiling
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import Canvas, ChartSpec, HLine, Series, chart_lines
from pgio_tui.tui.session import SessionInfo, session_from_recording
from pgio_tui.tui.themes import bundled_themes, theme_from_toml, user_themes


def text(line) -> str:
    return "".join(t for t, _ in line)


def frame(tick, t, **values):
    return Frame(tick=tick, t=t, elapsed=t, dt=1.0, values=values)


# --- FrameHistory ---------------------------------------------------------------------------------

def test_history_aligns_series_and_windows():
    h = FrameHistory()
    h.push(frame(0, 100.0, a=1.0))
    h.push(frame(1, 101.0, b=5.0))  # a metric seen late is back-filled with None
    h.push(frame(2, 102.0, a=3.0, b=6.0))
    assert h.series["a"] == [1.0, None, 3.0] and h.series["b"] == [None, 5.0, 6.0]
    w = h.window("a", 100.5, 102.0)
    assert w.t == [101.0, 102.0] and w.v == [None, 3.0] and w.tick == [1, 2]
    assert h.latest("a") == 3.0 and h.latest("a", at=101.5) is None and h.latest("b", at=100.0) is None
    assert h.total("b", 100.0, 102.0) == pytest.approx(5.0 + 6.0)
    assert h.window("nope", 0, 1e12).v == [None, None, None]


def test_history_trims_to_capacity_and_restarts_on_time_going_back():
    h = FrameHistory(capacity=100)
    for i in range(400):
        h.push(frame(i, float(i), a=float(i)))
    assert 100 <= len(h) <= 100 + 64 and h.series["a"][-1] == 399.0 and len(h.series["a"]) == len(h.t)
    h.push(frame(0, 5.0, a=1.0))  # replay seeking backwards without clear(): start over
    assert len(h) == 1


def test_history_checkpoint_spans_events_and_waits():
    h = FrameHistory()
    h.extend(synthetic_frames(80))
    spans = h.spans_in(h.t[0], h.end_t)
    assert len(spans) == 3
    first = spans[0]
    assert first.start == pytest.approx(h.t[5], abs=1.5) and first.end - first.start == pytest.approx(
        CHECKPOINT_LENGTH, abs=1.5)
    assert spans[1].start - first.start == pytest.approx(CHECKPOINT_EVERY, abs=1.5)
    kinds = [e.event.kind for e in h.events]
    assert kinds == ["setting_change", "annotation", "gap"]  # checkpoint and late events are not marks
    top = h.waits_summary(h.t[0], h.end_t, top=3)
    assert len(top) == 3 and top[0][1] >= top[1][1] >= top[2][1]
    assert h.checkpoints and h.checkpoints[-1]["buffers"] == 8241


# --- the braille chart ------------------------------------------------------------------------------

def test_canvas_lines_are_connected_and_one_style_per_run():
    c = Canvas(4, 1)
    c.line(0, 3, 7, 0, owner=1)
    rows = c.rows([None, "chart-1"])
    assert len(rows) == 1 and len(rows[0]) == 1  # one run of one style
    assert rows[0][0] == ("⣀⡤⠖⠋", "chart-1")  # rising from bottom left to top right


def test_chart_lines_shape_scale_axis_and_marks():
    h = FrameHistory()
    h.extend(synthetic_frames(120))
    spec = ChartSpec((Series("writes.backend", "backend", "chart-2"),
                      Series("latency.tps", "tps", "chart-4", group=1)))
    t1 = h.end_t
    lines = chart_lines(spec, h, t1 - 120, t1, width=60, height=10)
    assert len(lines) == 10 and all(sum(len(t) for t, _ in line) == 60 for line in lines[1:])
    assert text(lines[0]).startswith("■backend ") and "/5k" in text(lines[0])  # own scale for group 1
    assert re.match(r"^ *[0-9.]+k?┤", text(lines[1])) and text(lines[-2]).startswith("   0┤")
    axis = lines[-1]
    assert text(axis).startswith(" -2m└")
    styles = {s for _, s in axis}
    assert "ckpt-span" in styles and "mark" in styles  # checkpoints and the annotation
    assert "╳" in text(axis)  # the gap


def test_chart_is_aligned_to_absolute_time():
    """Between two column shifts only the newest column changes: few lines to repaint."""
    frames = list(synthetic_frames(200, incidents=False))
    h1, h2 = FrameHistory(), FrameHistory()
    h1.extend(frames[:-1])
    h2.extend(frames)
    spec = ChartSpec((Series("writes.bgwriter", "bgw", "chart-3"),))
    # 300 s over 2 x 50 dots: 3 s per dot column; pick two ticks in the same column
    a = chart_lines(spec, h1, frames[-2].t - 300, frames[-2].t, 55, 8)
    b = chart_lines(spec, h2, frames[-1].t - 300, frames[-1].t, 55, 8)
    if int(frames[-2].t // 3) == int(frames[-1].t // 3):
        changed = [i for i, (x, y) in enumerate(zip(a, b)) if text(x)[:-2] != text(y)[:-2]]
        assert changed in ([], [0])  # only the legend's value and the last cells


def test_empty_chart_says_why_and_thresholds_off_scale_get_an_arrow():
    h = FrameHistory()
    h.push(frame(0, 100.0, **{"mem.dirty_threshold_kb": 4e6}))
    spec = ChartSpec((Series("mem.dirty_kb", "Dirty", "chart-1"),),
                     hlines=(HLine("mem.dirty_threshold_kb", "max", "crit"),))
    lines = chart_lines(spec, h, -200.0, 100.0, 50, 8, empty_text="OS metrics only on the database host")
    assert "OS metrics only on the" in "".join(text(x) for x in lines)
    h.push(frame(1, 101.0, **{"mem.dirty_kb": 1000.0, "mem.dirty_threshold_kb": 4e6}))
    lines = chart_lines(spec, h, -200.0, 101.0, 50, 8)
    assert "max 4M↑" in text(lines[0])


# --- formats -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("v, want", [(None, "-"), (0, "0"), (0.5, "0.50"), (12.34, "12.3"), (999, "999"),
                                     (1234, "1.23k"), (98_765, "98.8k"), (2.5e6, "2.5M")])
def test_si(v, want):
    assert fmt.si(v) == want


def test_sizes_durations_and_bars():
    assert fmt.kib(280_000) == "273M" and fmt.kib(1_572_864) == "1.5G" and fmt.kib(None) == "-"
    assert fmt.duration(45) == "45s" and fmt.duration(750) == "12m30s" and fmt.duration(90061) == "1d01h"
    assert fmt.window(300) == "5m" and fmt.window(3600) == "1h" and fmt.window(90) == "90s"
    assert [nice_ceiling(v) for v in (0, 0.7, 3, 420, 2600)] == [1.0, 1.0, 5.0, 500.0, 5000.0]
    done, rest = bar(0.5, 10)
    assert done == "█" * 5 and rest == "░" * 5
    assert bar(None, 4) == ("", "····")


# --- themes and session ------------------------------------------------------------------------------

def test_bundled_themes_load_with_chart_colours():
    themes = {t.name: t for t in bundled_themes()}
    assert {"pgio-dark", "pgio-light"} <= set(themes)
    for t in themes.values():
        assert all(f"chart-{i}" in t.variables for i in range(1, 7))
    assert themes["pgio-dark"].dark and not themes["pgio-light"].dark


def test_user_themes_folder_loads_good_files_and_reports_bad_ones(tmp_path):
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n[variables]\nchart-1 = "#00ff00"\n')
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    (tmp_path / "broken.toml").write_text("name = \n")
    themes, errors = user_themes(tmp_path)
    assert [t.name for t in themes] == ["mine"] and themes[0].variables["chart-1"] == "#00ff00"
    assert len(errors) == 2 and any("not a colour" in e for e in errors) and any("not TOML" in e for e in errors)
    with pytest.raises(ValueError, match="unknown key"):
        theme_from_toml('name = "x"\nprimary = "#fff"\nprimery = "#000"\n')


def test_session_from_recording_and_setting_units(tmp_path):
    path = write_fixture(tmp_path / "f.pgio", n=5)
    with Recording(path) as rec:
        s = session_from_recording(rec)
    assert s.host == "fixture-host" and s.server_version == "17.2" and s.interval == 1.0
    assert s.setting_seconds("checkpoint_timeout") == 300.0
    assert SessionInfo(settings={"checkpoint_timeout": "5min"}).setting_seconds("checkpoint_timeout") == 300.0
    assert "pg_monitor" in SessionInfo(read_all_stats=False).why_no_waits()
    assert "database host" in SessionInfo(os_mode="none").why_no_os()
    assert SessionInfo(host="/tmp/sock", port="5433", dbname="bench").target == "local:5433/bench"
    assert Event  # imported for the frames above
