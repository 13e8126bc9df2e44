"""The cached chart drawing (plot.ChartCache + raster.Raster) gives, tick after tick, exactly the
lines of a plain full draw on a Canvas; and LinesView's segments look the same cell for cell."""

from __future__ import annotations

import pytest
from fixture_recording import synthetic_frames
from rich.style import Style

from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import ChartCache, ChartSpec, chart_lines, reference_lines
from pgio_tui.tui.widgets import checkpoint_pane, devices_pane, latency_pane, memory_pane, waits_pane, writes_pane
from pgio_tui.tui.widgets.lines import segments

SPECS = [writes_pane.CHART, memory_pane.CHART, checkpoint_pane.CHART, latency_pane.CHART, waits_pane.CHART,
         ChartSpec(series=tuple(devices_pane.device_series("nvme0n1")), fixed_max={1: 100.0})]


@pytest.mark.parametrize("incidents, interval, window, size", [
    (False, 1.0, 300, (57, 12)),  # the live default: 300 s over ~100 dots, a shift every ~3 ticks
    (True, 1.0, 60, (40, 7)),  # gaps, a late tick, events; more dots than ticks
    (True, 0.5, 60, (30, 5)),
    (True, 2.0, 120, (57, 12)),  # ticks two dot columns apart: joined by lines
    (False, 1.0, 1800, (57, 12)),  # a dot column every ~17 ticks: the grids are reused after long waits
    (True, 1.0, 100, (105, 20)),  # a shift every tick, alternating the cells' pairing
])
def test_cached_drawing_equals_a_full_draw_every_tick(incidents, interval, window, size):
    frames = list(synthetic_frames(200, incidents=incidents, interval=interval))
    history = FrameHistory()
    caches = [ChartCache() for _ in SPECS]
    compared = 0
    for n, f in enumerate(frames):
        history.push(f)
        t1 = history.end_t
        for spec, cache in zip(SPECS, caches):
            got = chart_lines(spec, history, t1 - window, t1, *size, cache=cache)
            if n % 3 == 0 or n > 150:
                assert got == reference_lines(spec, history, t1 - window, t1, *size), (n, spec.series[0].metric)
                compared += 1
    assert compared > 300


def test_cached_drawing_follows_zoom_pause_and_a_restart():
    frames = list(synthetic_frames(150, incidents=True))
    history = FrameHistory()
    cache = ChartCache()
    spec = memory_pane.CHART  # threshold lines too
    for f in frames[:100]:
        history.push(f)
    for window, t1 in [(300, history.end_t), (60, history.end_t), (60, history.end_t - 20), (120, history.end_t)]:
        assert chart_lines(spec, history, t1 - window, t1, 50, 10, cache=cache) == \
            reference_lines(spec, history, t1 - window, t1, 50, 10)
    history.clear()  # replay seeking: the history starts over
    for f in frames[100:]:
        history.push(f)
        t1 = history.end_t
        assert chart_lines(spec, history, t1 - 60, t1, 50, 10, cache=cache) == \
            reference_lines(spec, history, t1 - 60, t1, 50, 10)


def test_a_chart_tick_between_shifts_changes_only_its_newest_cells():
    frames = list(synthetic_frames(260, incidents=False))
    history = FrameHistory()
    history.extend(frames[:-1])
    cache = ChartCache()
    spec = ChartSpec(series=writes_pane.CHART.series[:1], legend=False)
    t1 = history.end_t
    before = chart_lines(spec, history, t1 - 300, t1, 55, 8, cache=cache)
    rows_before = list(cache.raster.rows)
    history.push(frames[-1])
    t1 = history.end_t
    after = chart_lines(spec, history, t1 - 300, t1, 55, 8, cache=cache)
    if int((t1 - 1) // 3) == int(t1 // 3):  # 300 s over 100 dots: same dot column
        for a, b, ra, rb in zip(before, after, rows_before, cache.raster.rows):
            assert "".join(t for t, _ in a)[:-1] == "".join(t for t, _ in b)[:-1]
            if a == b:
                assert ra is rb  # an unchanged row is not even rebuilt


BASE = Style(color="white", bgcolor="black")
PAL = {"chart-1": Style(color="blue"), "chart-2": Style(color="red"), "muted": Style(color="grey50"),
       "bold": Style(bold=True), "selected": Style(reverse=True),
       "diff-both": Style(color="blue", bgcolor="red")}


def looks(segs) -> list:
    """Each cell as it shows: character, background, and foreground/bold only where not blank."""
    out = []
    for seg in segs:
        st = seg.style
        for ch in seg.text:
            fg, bg = st.color, st.bgcolor
            if st.reverse:
                fg, bg = bg, fg
            out.append((ch, bg, None if ch == " " else (fg, st.bold)))
    return out


@pytest.mark.parametrize("runs", [
    (("⣀⡀", "chart-1"), ("  ", None), ("⢀", "chart-1"), (" ", None), ("⣿", "chart-2"), (" ", "chart-2")),
    (("  ", None), ("x", "muted"), (" ", "bold"), ("y", "bold"), ("   ", None)),
    ((" ", "selected"), ("a", None), ("  ", "diff-both"), (" ", None), ("b", "chart-1")),
])
def test_segments_join_blanks_without_changing_a_cell(runs):
    segs = segments(runs, BASE, PAL)
    plain = [s for s in (BASE + PAL[n] if n else BASE for _t, n in runs)]
    from rich.segment import Segment
    assert looks(segs) == looks([Segment(t, st) for (t, _n), st in zip(runs, plain)])
    assert len(segs) < len(runs)


def test_chart_row_of_one_series_is_one_segment():
    segs = segments((("⣀⡀", "chart-1"), ("  ", None), ("⢀", "chart-1"), (" ", None), ("⣿⣿", "chart-1")), BASE, PAL)
    assert len(segs) == 1


def test_y_scale_follows_the_window_not_an_old_spike():
    """A spike sets the scale while it is in the window and not a tick longer (live, cached)."""
    from pgio_tui.frame import Frame
    from pgio_tui import format as fmt
    from pgio_tui.tui.plot import Series

    history, cache = FrameHistory(), ChartCache()
    spec = ChartSpec((Series("x", "x", "chart-1"),), legend=False)
    tops = {}
    for k in range(420):
        history.push(Frame(tick=k, t=float(k), elapsed=float(k), dt=1.0, values={"x": 5e4 if k == 100 else 100.0}))
        lines = chart_lines(spec, history, k - 300.0, float(k), 40, 6, cache=cache)
        tops[k] = "".join(t for t, _ in lines[0]).split("┤")[0].strip()
    assert tops[99] == fmt.si(200.0)
    assert all(tops[k] == fmt.si(1e5) for k in range(100, 401))  # 5e4 x 1.05, rounded up
    assert all(tops[k] == fmt.si(200.0) for k in range(401, 420))  # gone with the spike
