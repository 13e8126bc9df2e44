"""window_sums.py: the window's counts kept between redraws equal FrameHistory's direct sums tick
after tick, through a trimmed history, zoom, pause, a restart, and values that are not integers."""

from __future__ import annotations

from fixture_recording import synthetic_frames

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.window_sums import WindowSums, WindowTotals, column_rows

COUNTS = [*M.LATENCY_OVER.values(), *M.STATEMENTS_LOG_OVER.values()]


def direct(h: FrameHistory, metric: str, t0: float, t1: float):
    return sum(v for v in h.window(metric, t0, t1).v if v is not None)


def check(h, counts, t0, t1):
    assert counts.update(h, t0, t1)
    for m in COUNTS:
        got, want = counts.total(m), direct(h, m, t0, t1)
        assert got == want and type(got) is type(want), (m, got, want)


def test_kept_sums_equal_direct_sums_every_tick():
    h = FrameHistory(capacity=150)  # trimmed every ~64 ticks
    counts = WindowSums(column_rows(COUNTS))
    window = 60
    for n, f in enumerate(synthetic_frames(420, incidents=True)):
        h.push(f)
        t1 = h.end_t
        if n == 200:
            window = 120  # zoom out
        if n == 260:
            window = 30  # zoom in
        if 300 <= n < 310:  # paused: the window stands still while ticks arrive
            t1 = h.t[-1 - (n - 300)]
        check(h, counts, t1 - window, t1)
    h.clear()  # replay seeking: the history starts over
    for f in synthetic_frames(80, incidents=False, seed=3):
        h.push(f)
        check(h, counts, h.end_t - 60, h.end_t)


def test_floats_that_hold_integers_add_exactly_and_others_are_summed_directly():
    h = FrameHistory()
    sums = WindowSums(column_rows(["c"]))
    for k, v in enumerate([1, 2.0, None, 3, 0.5, 4, 5]):
        h.push(Frame(tick=k, t=100.0 + k, elapsed=float(k), dt=1.0, values={"c": v}))
        t1 = h.end_t
        for t0 in (t1 - 2.5, t1 - 10):
            exact = sums.update(h, t0, t1)
            want = direct(h, "c", t0, t1)
            if exact:
                assert sums.total("c") == want and type(sums.total("c")) is type(want)
            else:  # 0.5 in the window: the caller sums it itself
                assert any(v == 0.5 for v in h.window("c", t0, t1).v)


def test_kept_products_give_totals_equal_to_history_total_every_tick():
    h = FrameHistory(capacity=150)
    totals = WindowTotals()
    metrics = [M.WRITES_CHECKPOINTER, M.WRITES_BACKEND, M.WRITES_BGWRITER, M.FSYNCS_BACKEND, "nope"]
    window = 60
    for n, f in enumerate(synthetic_frames(420, incidents=True)):
        if n % 7 == 3 or 100 <= n < 170:  # ticks without the value, and windows with none of it
            del f.values[M.WRITES_BGWRITER]
        h.push(f)
        t1 = h.end_t
        window = 120 if n >= 200 else window
        window = 30 if n >= 260 else window
        if 300 <= n < 310:
            t1 = h.t[-1 - (n - 300)]
        for m in metrics:
            got, want = totals.total(h, m, t1 - window, t1), h.total(m, t1 - window, t1)
            assert got == want and type(got) is type(want), (n, m, got, want)  # exactly: the same additions
    h.clear()
    for f in synthetic_frames(40, incidents=False, seed=2):
        h.push(f)
        for m in metrics:
            assert totals.total(h, m, h.end_t - 60, h.end_t) == h.total(m, h.end_t - 60, h.end_t)
