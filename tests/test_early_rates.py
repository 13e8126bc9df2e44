"""The live view's early second tick (issue 28: rates on the first screen), on a real server: the
second tick comes a quarter of a second after the first, its rates are the counters' deltas over
the real time between the two samples, and the schedule goes on every interval from there."""

from __future__ import annotations

import time

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler
from pgio_tui.tui.widgets.status import SHORT_RATES, short_rates

GAP = 0.25


def test_the_early_rate_is_the_counter_delta_over_its_real_interval(pg_cluster):
    s = Sampler(pg_cluster.conninfo(), interval=1.0)
    s.open()
    read = []  # the raw samples the sampler read, in order
    sample = s.pg.sample

    def recorded(*args, **kw):
        raw = sample(*args, **kw)
        read.append(raw)
        return raw

    s.pg.sample = recorded
    try:
        frames = s.frames(first_gap=GAP)
        first = next(frames)
        t_first = time.monotonic()
        with pg_cluster.connect() as conn:  # transactions between the two ticks, their counts flushed at once
            conn.autocommit = True
            for _ in range(20):
                conn.execute("SELECT 1")
            conn.execute("SELECT pg_stat_force_next_flush()")
            conn.execute("SELECT 1")
        early = next(frames)
        t_early = time.monotonic()
        later = next(frames)
    finally:
        s.close()
    assert first.tick == 0 and first.dt is None and first.values.get(M.DB_XACT_S) is None  # one sample: no rate
    # the early tick: no sooner than GAP after the first, well before the interval, dt its real length
    assert early.tick == 1 and GAP <= early.dt < 0.9
    assert early.dt == pytest.approx(t_early - t_first, abs=0.1)
    assert early.elapsed == pytest.approx(early.dt, abs=0.1)  # from the first tick's start, dt from its answer
    delta = read[1]["db"]["xact"] - read[0]["db"]["xact"]
    assert delta >= 22  # ours at least, flushed before the second sample
    assert early.values[M.DB_XACT_S] == pytest.approx(delta / early.dt)
    assert early.values[M.LATENCY_TPS] == early.values[M.DB_XACT_S]
    assert not any(e.kind in ("late", "gap") for e in early.events)
    # then every interval from the early tick, not from the first
    assert later.tick == 2 and later.dt == pytest.approx(1.0, abs=0.15)
    assert later.elapsed == pytest.approx(early.elapsed + 1.0, abs=0.15)
    assert later.values[M.DB_XACT_S] == pytest.approx((read[2]["db"]["xact"] - read[1]["db"]["xact"]) / later.dt)
    # the header says what the early rates span, and nothing once they span the interval
    said = "".join(text for text, _ in short_rates(early, 1.0))
    assert said == (f"rates over {early.dt * 1000:.0f} ms " if early.dt <= SHORT_RATES else "")
    assert short_rates(first, 1.0) == [] and short_rates(later, 1.0) == []


def test_without_the_early_tick_the_schedule_is_unchanged(pg_cluster):
    s = Sampler(pg_cluster.conninfo(), interval=0.5)
    s.open()
    try:
        frames = s.frames()
        got = [next(frames) for _ in range(3)]
    finally:
        s.close()
    assert [f.elapsed for f in got] == pytest.approx([0.0, 0.5, 1.0], abs=0.1)
