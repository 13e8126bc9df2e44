"""FrameHistory keeps what has() and waits_summary() found between calls (so a redraw costs the
ticks that arrived, not the whole history): every answer must equal a fresh computation over the
same lists, whatever the window does (moves on, zooms, goes back, pauses), across trims and clears."""

from __future__ import annotations

import random

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.tui.history import FrameHistory

WAITS = [("client backend", "LWLock", "WALWrite"), ("client backend", "IO", "DataFileRead"),
         ("checkpointer", "Timeout", "CheckpointWriteDelay"), ("autovacuum worker", "IO", "DataFileWrite")]


def fresh_has(h: FrameHistory, metric: str, t0=None, t1=None) -> bool:
    col = h.series.get(metric)
    if col is None:
        return False
    if t0 is None:
        return any(v is not None for v in col)
    i, j = h.index_range(t0, t1 if t1 is not None else float("inf"))
    return any(col[k] is not None for k in range(i, j))


def fresh_waits(h: FrameHistory, t0: float, t1: float, top: int):
    """Means over the ticks that took a wait sample (sessions.active known), the last one's now."""
    i, j = h.index_range(t0, t1)
    sampled = [k for k in range(i, j) if h.series[M.SESSIONS_ACTIVE][k] is not None]
    if not sampled:
        return []
    sums: dict = {}
    for k in sampled:
        for bt, wt, ev, n in h.waits[k]:
            sums[(bt, wt, ev)] = sums.get((bt, wt, ev), 0) + n
    now: dict = {}
    for bt, wt, ev, n in h.waits[sampled[-1]]:
        now[(bt, wt, ev)] = now.get((bt, wt, ev), 0) + n
    ranked = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [(key, total / len(sampled), now.get(key, 0)) for key, total in ranked]


def make_frame(rng: random.Random, tick: int, t: float, counts_of=int) -> Frame:
    values = {}
    if rng.random() < 0.9:
        values["always"] = rng.random()
    if tick > 150 and rng.random() < 0.3:
        values["late"] = 1.0  # absent for a long while, then sometimes there
    if rng.random() < 0.01:
        values["rare"] = 2.0
    values["never"] = None
    if rng.random() < 0.3 or 300 < tick < 360:  # no wait sample at this tick (a stride, or long none)
        values[M.SESSIONS_ACTIVE] = None
        return Frame(tick=tick, t=t, elapsed=t, dt=1.0, values=values)
    values[M.SESSIONS_ACTIVE] = rng.randrange(0, 4)
    waits = [(*w, counts_of(rng.randrange(0, 4))) for w in WAITS if rng.random() < 0.5]
    return Frame(tick=tick, t=t, elapsed=t, dt=1.0, values=values, waits=waits)


def test_has_and_waits_summary_equal_a_fresh_computation():
    rng = random.Random(13)
    h = FrameHistory(capacity=120)  # trims every 64 ticks past 120
    window, paused_t1, t, checks = 40.0, None, 1000.0, 0
    for tick in range(900):
        t += 1.0
        if tick == 500:
            t -= 300.0  # time went back: the history starts over
        if tick == 700:
            h.clear()  # replay seeks
        h.push(make_frame(rng, tick, t))
        r = rng.random()
        if r < 0.05:
            window = rng.choice([10.0, 40.0, 60.0, 200.0])  # zoom
        elif r < 0.08:
            paused_t1 = None if paused_t1 is not None else h.end_t  # pause / resume
        elif r < 0.1 and len(h.t) > 5:
            paused_t1 = h.t[rng.randrange(len(h.t))]  # the window's end moved back
        t1 = paused_t1 if paused_t1 is not None else h.end_t
        for metric in ("always", "late", "rare", "never", "missing"):
            assert h.has(metric) == fresh_has(h, metric), (tick, metric)
            assert h.has(metric, t1 - window, t1) == fresh_has(h, metric, t1 - window, t1), (tick, metric)
            assert h.has(metric, t1 - window) == fresh_has(h, metric, t1 - window), (tick, metric)
        for top in (3, 8):
            assert h.waits_summary(t1 - window, t1, top=top) == fresh_waits(h, t1 - window, t1, top), tick
            i, j = h.index_range(t1 - window, t1)
            sampled = sum(h.series[M.SESSIONS_ACTIVE][k] is not None for k in range(i, j))
            assert h.waits_sampled(t1 - window, t1) == (sampled, j - i), tick
            checks += 1
    assert checks == 1800


def test_waits_summary_with_counts_that_are_not_ints():
    """A recording may hold counts of another type: summed afresh every time, in window order."""
    rng = random.Random(7)
    h = FrameHistory()
    for tick in range(200):
        h.push(make_frame(rng, tick, 1000.0 + tick, counts_of=lambda n: n + 0.1))
        assert h.waits_summary(h.end_t - 30, h.end_t) == fresh_waits(h, h.end_t - 30, h.end_t, 8)


def test_waits_means_are_over_the_ticks_that_took_a_sample():
    """With pg_stat_activity read every third tick, the ticks between are unknown, not idle: the
    mean is over the sampled ticks and "now" is the last sampled tick's."""
    h = FrameHistory()
    io = ("client backend", "IO", "DataFileRead")
    for tick in range(7):  # sampled at 0, 3, 6 with 3, 6 and 0 sessions in DataFileRead
        sampled = tick % 3 == 0
        waits = [(*io, 3 * (tick // 3 + 1))] if sampled and tick < 6 else []
        h.push(Frame(tick=tick, t=100.0 + tick, elapsed=tick, dt=1.0, waits=waits,
                     values={M.SESSIONS_ACTIVE: len(waits) if sampled else None}))
    assert h.waits_summary(100.0, 106.0) == [(io, 9 / 3, 0)]
    assert h.waits_summary(100.0, 105.0) == [(io, 9 / 2, 6)]  # the last sampled tick is 3
    assert h.waits_summary(101.0, 102.0) == []  # no sample in the window
    assert h.waits_sampled(100.0, 106.0) == (3, 7)
    assert h.latest(M.SESSIONS_ACTIVE, 105.0) is None
    assert h.latest_sampled(M.SESSIONS_ACTIVE, 105.0) is None  # no server answer at 4 and 5 (no server_ms)
    answered = FrameHistory()
    for tick, active, server_ms in ((0, 3, 1.0), (1, None, 1.0), (2, None, None), (3, None, 1.0)):
        answered.push(Frame(tick=tick, t=100.0 + tick, elapsed=tick, dt=1.0,
                            values={M.SESSIONS_ACTIVE: active, M.OBSERVER_SERVER_MS: server_ms}))
    assert answered.latest_sampled(M.SESSIONS_ACTIVE, 101.0) == 3  # a tick between samples: the last one's
    assert answered.latest_sampled(M.SESSIONS_ACTIVE) is None  # not past a tick the server did not answer


def test_the_waits_pane_says_how_often_it_samples():
    """Sampled every 4 ticks at 1 s: its border says so; every tick: nothing, also when the server
    was down for half the window (its unanswered ticks took no sample, but not for the stride);
    a window without a sample says that, not that no session waits."""
    from pgio_tui.tui.session import SessionInfo
    from pgio_tui.tui.widgets.pane import View
    from pgio_tui.tui.widgets.waits_pane import WaitsPane
    io = ("client backend", "IO", "DataFileRead")
    for every, down, said in ((4, False, "sampled every 4s"), (1, True, ""), (4, True, "sampled every 4s"),
                              (1, False, "")):
        h = FrameHistory()
        for tick in range(40):
            up = not (down and 10 <= tick < 30)
            sampled = up and tick % every == 0
            h.push(Frame(tick=tick, t=100.0 + tick, elapsed=tick, dt=1.0, waits=[(*io, 2)] if sampled else [],
                         values={M.SESSIONS_ACTIVE: 2 if sampled else None, M.SESSIONS_IO_WAIT: 2 if sampled else None,
                                 M.OBSERVER_SERVER_MS: 1.0 if up else None}))
        session = SessionInfo(read_all_stats=True)
        assert h.waits_sampled(100.0, 139.0) == (-(-(20 if down else 40) // every), 20 if down else 40)
        assert WaitsPane.subtitle(None, View(h, session, 100.0, 139.0)) == said  # type: ignore[arg-type]
        assert WaitsPane.vital(View(h, session, 100.0, 139.0)) == [("IO wait ", "muted"), ("2", "warn")]
    lines = WaitsPane.bar_lines(View(h, session, 137.5, 138.5), 60, 5)  # every 1: one tick, sampled
    assert "DataFileRead" in "".join(text for line in lines for text, _ in line)
    h = FrameHistory()
    for tick in range(8):
        h.push(Frame(tick=tick, t=100.0 + tick, elapsed=tick, dt=1.0,
                     values={M.SESSIONS_ACTIVE: 1 if tick == 0 else None, M.OBSERVER_SERVER_MS: 1.0}))
    lines = WaitsPane.bar_lines(View(h, session, 103.0, 107.0), 60, 5)
    assert "no wait sample in this window" in "".join(text for line in lines for text, _ in line)
