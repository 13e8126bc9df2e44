"""The replay model without a terminal: the player's moves, speeds, `j` parsing and the moments."""

from __future__ import annotations


import pytest
from fixture_recording import START_T, synthetic_frames

from pgio_tui.store.moments import find_moments
from pgio_tui.store.player import MAX, MAX_BATCH, SPEEDS, Player, hms, parse_jump, parse_seconds, speed_label
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder


pytestmark = pytest.mark.usefixtures("utc")

@pytest.fixture
def rec(fixture_file):
    with Recording(fixture_file) as r:
        yield r


def test_index_steps_over_the_gap(rec):
    p = Player(rec, playing=False)
    assert len(p) == 298 and p.tick == 0 and not p.follow  # ticks 40 and 41 are missing; closed file
    p.seek_tick(39)
    assert p.step(1) == 42 and p.step(-1) == 39
    assert p.seek_tick(40) == 39  # a tick in a gap: the one before it
    assert p.step(-1000) == 0 and p.step(10_000) == 299 and p.at_end


def test_seek_time_lands_on_the_tick_at_or_before(rec):
    p = Player(rec)
    assert p.seek_time(START_T + 100.5) == 100 and p.seek_nearest(START_T + 100.9) == 101
    assert p.seek_time(START_T - 50) == 0
    assert p.seek_time(START_T + 10_000) == 299
    assert Player(rec, start_t=START_T + 77).tick == 77


def test_advance_follows_speed_and_stops_at_the_end(rec):
    p = Player(rec, start_t=START_T + 100)
    assert p.advance(2.0) == 2 and p.tick == 102
    p.faster()
    assert p.speed == 2.0
    p.advance(5.0)
    assert p.tick == 112
    p.playing = False
    assert p.advance(100) == 0 and p.tick == 112
    p.playing = True
    p.speed = MAX
    assert p.advance(0.0) == min(MAX_BATCH, 299 - 112 - 0)  # fewer than MAX_BATCH: the file ends first
    assert p.at_end and not p.playing  # a closed recording pauses at its end
    p.toggle()
    assert p.playing and p.tick == 0  # play again from the start


def test_speed_steps():
    p = Player.__new__(Player)  # speed alone: no recording needed
    p.speed = 1.0
    ups = [p.faster() for _ in range(12)]
    assert ups[:9] == [2, 4, 8, 16, 32, 64, 100, MAX, MAX]
    downs = [p.slower() for _ in range(12)]
    assert downs[0] == 100 and downs[-1] == 0.25 and SPEEDS[0] == 0.25
    assert speed_label(MAX) == "max" and speed_label(0.25) == "0.25×" and speed_label(4.0) == "4×"


@pytest.mark.parametrize("text, seconds", [
    ("90", 90), ("90s", 90), ("5m", 300), ("1h30m", 5400), ("1:30", 90), ("1:02:03", 3723), ("2min", 120),
    ("1.5h", 5400)])
def test_parse_seconds(text, seconds):
    assert parse_seconds(text) == seconds


def test_parse_jump_forms():
    start, end, now = START_T, START_T + 3 * 86400, START_T + 1000
    assert parse_jump("+5m", start_t=start, end_t=end, now_t=now) == now + 300
    assert parse_jump("-30s", start_t=start, end_t=end, now_t=now) == now - 30
    assert parse_jump("+1:30", start_t=start, end_t=end, now_t=now) == now + 90
    assert parse_jump("90s", start_t=start, end_t=end, now_t=now) == start + 90
    assert parse_jump("1:30", start_t=start, end_t=end, now_t=now) == start + 90
    # START_T is 2023-11-14 22:13:20 UTC: 22:15:00 is that day, 08:00:00 the next morning
    assert parse_jump("22:15:00", start_t=start, end_t=end, now_t=now) == start + 100
    assert parse_jump("08:00:00", start_t=start, end_t=end, now_t=now) == start + 9 * 3600 + 46 * 60 + 40
    assert parse_jump("2023-11-14 22:20:00", start_t=start, end_t=end, now_t=now) == start + 400
    for bad in ("", "soon", "+", "25:00:00", "1:xx"):
        with pytest.raises(ValueError):
            parse_jump(bad, start_t=start, end_t=end, now_t=now)


def test_hms():
    assert hms(59.6) == "1:00" and hms(3723) == "1:02:03" and hms(-3) == "0:00"


def test_jump_moves_the_player(rec):
    p = Player(rec, start_t=START_T + 100)
    assert p.jump("+30s") == 130
    assert p.jump("-1m") == 70
    assert p.jump("2:00") == 120


def test_moments_recorded_and_from_tables(rec):
    m = find_moments(rec)
    kinds = {(x.tick, x.kind) for x in m}
    assert {(5, "checkpoint_start"), (24, "checkpoint_end"), (20, "setting_change"), (25, "annotation"),
            (42, "gap"), (0, "workload_start"), (299, "workload_stop")} <= kinds
    assert [x.tick for x in m] == sorted(x.tick for x in m)
    lat = [x for x in m if x.kind == "latency_high"]
    assert lat and all("p99" in x.text for x in lat)


def test_next_and_previous_moment(rec):
    p = Player(rec, start_t=START_T + 21)
    p.moments = find_moments(rec)
    assert p.next_moment().tick == 24 and p.tick == 24
    assert p.next_moment().tick == 25
    assert p.previous_moment().tick == 24
    assert p.previous_moment().kind == "setting_change" and p.tick == 20
    assert p.next_moment(("gap",)).tick == 42


def test_derived_dirty_and_latency(tmp_path):
    frames = list(synthetic_frames(400, incidents=False))
    for f in frames:
        if 60 <= f.tick < 70:
            f.values["mem.dirty_kb"] = 2_000_000  # over the 1.5 GB background threshold
        f.values["latency.p99_ms"] = 5.0
    for tick in range(90, 97):  # 7 slow ticks; the p99 of 400 ticks is the 5th slowest (tick 92)
        frames[tick].values["latency.p99_ms"] = 400.0 + tick
    path = tmp_path / "derived.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as w:
        for f in frames:
            w.write(f)
    with Recording(path) as r:
        m = [(x.tick, x.kind) for x in find_moments(r)]
    assert (60, "dirty_above") in m and (70, "dirty_below") in m
    assert [t for t, k in m if k == "latency_high"] == [93]  # one moment for a run of slow ticks

