"""The sampler's clock on a real throwaway server, with a fake monotonic clock we move by hand:
the fixed schedule (no drift), a late tick, a gap (missed ticks are skipped numbers plus an event),
a counter reset and a server restart (no rate that tick, an event instead of a spike)."""

from __future__ import annotations

import threading

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

WRITES = [M.writes(s) for s in M.WRITE_SOURCES]


class FakeClock:
    """time.monotonic as the test says; the sampler's waits move it instead of sleeping."""

    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, s: float) -> None:
        self.t += s


class FakeStop(threading.Event):
    """The sampler's stop event: waiting `s` seconds for it moves the fake clock by `s`."""

    def __init__(self, clock: FakeClock):
        super().__init__()
        self.clock = clock

    def wait(self, timeout: float | None = None) -> bool:
        self.clock.advance(timeout or 0.0)
        return self.is_set()


@pytest.fixture
def sampler(pg_cluster):
    clock = FakeClock()
    s = Sampler(pg_cluster.conninfo(), interval=1.0, clock=clock)
    s.open()
    yield s, clock
    s.close()


def kinds(frame) -> list[str]:
    return [e.kind for e in frame.events]


def test_ticks_follow_the_schedule_without_drift(sampler):
    s, clock = sampler
    frames = s.frames(stop=FakeStop(clock))
    got = []
    for _ in range(5):
        got.append(next(frames))
        clock.advance(0.3)  # each tick's work takes 0.3 s: the next tick still starts on its schedule
    assert [f.tick for f in got] == [0, 1, 2, 3, 4]
    assert [f.elapsed for f in got] == pytest.approx([0.0, 1.0, 2.0, 3.0, 4.0])
    assert all(f.values[M.OBSERVER_LATE_MS] == 0 for f in got)
    assert [f.dt for f in got[1:]] == pytest.approx([1.0] * 4)  # the rate's divisor is the measured tick
    assert "start" in kinds(got[0]) and not any("gap" in kinds(f) or "late" in kinds(f) for f in got)


def test_a_late_tick_is_recorded_as_late(sampler):
    s, clock = sampler
    frames = s.frames(stop=FakeStop(clock))
    next(frames)
    clock.advance(1.7)  # the consumer held the loop: tick 1 starts 700 ms after its due time
    late = next(frames)
    assert late.tick == 1 and late.values[M.OBSERVER_LATE_MS] == pytest.approx(700)
    assert "late" in kinds(late) and late.elapsed == pytest.approx(1.7)
    on_time = next(frames)  # and the schedule is kept: tick 2 is due at 2.0, not at 2.7
    assert on_time.tick == 2 and on_time.elapsed == pytest.approx(2.0) and on_time.values[M.OBSERVER_LATE_MS] == 0


def test_missed_ticks_are_a_gap_not_silently_dropped(sampler):
    s, clock = sampler
    frames = s.frames(stop=FakeStop(clock))
    next(frames), next(frames)
    clock.advance(4.5)  # suspended: ticks 2, 3 and 4 could not run
    after = next(frames)
    gap = [e for e in after.events if e.kind == "gap"]
    assert after.tick == 5 and len(gap) == 1 and gap[0].data == {"ticks": 3}
    assert after.values[M.OBSERVER_LATE_MS] == pytest.approx(500)
    assert after.dt == pytest.approx(4.5)  # rates over the whole stretch, not per missed tick


def test_a_counter_reset_gives_an_event_and_no_rate(sampler, pg_cluster):
    s, clock = sampler
    frames = s.frames(stop=FakeStop(clock))
    next(frames), next(frames)
    with pg_cluster.connect() as conn:
        conn.execute("CHECKPOINT")  # counters above zero, so the reset is visible
    assert next(frames).values[M.WRITES_CHECKPOINTER] is not None
    with pg_cluster.connect() as conn:
        conn.execute("SELECT pg_stat_reset_shared('bgwriter')")
        if s.pg.features.version_num >= 170000:
            conn.execute("SELECT pg_stat_reset_shared('checkpointer')")
    reset = next(frames)
    assert "stats_reset" in kinds(reset)
    assert all(reset.values.get(m) is None for m in WRITES)  # no rate across a reset
    again = next(frames)
    assert again.values[M.WRITES_CHECKPOINTER] is not None and again.values[M.WRITES_CHECKPOINTER] >= 0


def test_a_server_restart_is_a_gap_then_a_reconnect_and_counters_start_over(make_cluster):
    cluster = make_cluster()
    clock = FakeClock()
    s = Sampler(cluster.conninfo(), interval=1.0, clock=clock)
    s.open()
    try:
        frames = s.frames(stop=FakeStop(clock))
        next(frames), next(frames)
        cluster.restart()
        down = next(frames)
        assert "gap" in kinds(down) and all(down.values.get(m) is None for m in WRITES)
        back = next(frames)  # the reconnect backoff (1 s) has passed on the fake clock
        assert "reconnect" in kinds(back) and "server_restart" in kinds(back)
        assert all(back.values.get(m) is None for m in WRITES)  # no rate against the old server's counters
        assert next(frames).values[M.WRITES_CHECKPOINTER] is not None
    finally:
        s.close()
