"""The checkpoint parser on real server log lines of 13-18, and the tracker's state machine."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from pgio_tui.sources.checkpoint import (CheckpointSettings, CheckpointTracker, TickInput, kind_from_flags,
                                         log_time, lsn_to_int, parse_log_line)
from pgio_tui.sources.pgfeatures import SUPPORTED_MAJORS

LOGS = Path(__file__).parent / "data" / "logs"


@pytest.mark.parametrize("major", SUPPORTED_MAJORS)
def test_every_captured_checkpoint_line_parses(major):
    lines = (LOGS / f"pg{major}.log").read_text().splitlines()
    starts = [ln for ln in lines if "checkpoint starting:" in ln]
    completes = [ln for ln in lines if "checkpoint complete:" in ln]
    assert starts and completes
    for ln in starts:
        what, info = parse_log_line(ln)
        assert what == "start" and info["kind"] in ("immediate", "time", "wal", "requested", "shutdown")
    for ln in completes:
        what, info = parse_log_line(ln)
        assert what == "complete", ln
        assert info["log_buffers"] == int(ln.split("wrote ")[1].split()[0])
        assert info["total_s"] >= info["write_s"]
        assert info["buffers_pct"] == float(ln.split(" buffers (")[1].split("%")[0])
        assert info["longest_s"] == float(ln.split("longest=")[1].split()[0])
        assert info["average_s"] <= info["longest_s"] and info["sync_files"] >= 0
        assert (info["lsn"] is not None) == (major >= 16)  # lsn/redo lsn appear in 16
        assert (info["slru_buffers"] is not None) == (major >= 18)  # SLRU split out in 18
    for ln in (ln for ln in lines if "occurring too frequently" in ln):
        what, info = parse_log_line(ln)
        assert what == "too_frequent" and info["seconds"] >= 0
    assert parse_log_line(next(ln for ln in lines if "HINT:" in ln)) is None


def test_kinds_from_flags():
    assert kind_from_flags(" immediate force wait") == "immediate"
    assert kind_from_flags(" time") == "time"
    assert kind_from_flags(" wal") == "wal"
    assert kind_from_flags(" shutdown immediate") == "shutdown"
    assert kind_from_flags(" force wait") == "requested"


def test_log_time_infers_the_zone():
    # 03:42:21.617 CET is 02:42:21.617 UTC; the sample (server clock) came 0.2 s after the line.
    written = datetime(2026, 11, 21, 2, 42, 21, 617000, tzinfo=timezone.utc).timestamp()
    line = "2026-11-21 03:42:21.617 CET [9936] LOG:  checkpoint starting: time"
    assert log_time(line, written + 0.2, 1.0) == pytest.approx(written, abs=1e-6)
    utc_line = "2026-11-21 02:42:21 UTC [9936] LOG:  checkpoint starting: time"  # %t: no milliseconds
    assert log_time(utc_line, written + 0.2, 1.0) == pytest.approx(written - 0.617, abs=1e-6)
    assert log_time("no stamp here", written, 1.0) is None


def test_lsn():
    assert lsn_to_int("0/18A57B8") == 0x18A57B8
    assert lsn_to_int("1/0") == 1 << 32


def counters(started, buffers, timed=0, done=None, write_ms=0.0, sync_ms=0.0):
    return {"started": started, "timed": timed, "done": done, "buffers": buffers, "slru": None,
            "write_ms": write_ms, "sync_ms": sync_ms, "stats_reset": "r"}


def tick(n, c, lsn="0/100", wal=1e6, busy=None, lines=(), wait=None):
    return TickInput(tick=n, t=1000.0 + n, counters=c, busy=busy, checkpoint_lsn=lsn, checkpoint_time=900.0,
                     redo_lsn="0/80", wal_pos=wal, log_entries=[(None, ln) for ln in lines], wait=wait, server_t=None)


SETTINGS = CheckpointSettings(timeout_s=30, completion_target=0.5, max_wal_size_mb=1024,
                              wal_segment_size=16 << 20, log_checkpoints=False)


def test_counters_mode_spread_checkpoint_and_a_skipped_one():
    tr = CheckpointTracker(SETTINGS, log_readable=False)
    assert tr.mode == "counters"
    out = [tr.update(tick(0, counters(5, 100)))]
    # An idle system's timed checkpoint is skipped: started rises, nothing written, pg_control unchanged.
    out.append(tr.update(tick(1, counters(6, 100, timed=1))))
    assert out[-1].values["checkpoint.active"] == 0 and not out[-1].events
    # A real timed checkpoint: started rises with buffers written.
    out.append(tr.update(tick(2, counters(7, 150, timed=2))))
    assert out[-1].values["checkpoint.active"] == 1 and out[-1].events[0][0] == "checkpoint_start"
    assert out[-1].values["checkpoint.kind"] == "time"
    out.append(tr.update(tick(3, counters(7, 250, timed=2), wal=1e6 + 1000)))
    assert out[-1].values["checkpoint.buffers_written"] == 150
    # pg_control moves: the checkpoint is over; the row waits for write/sync time to be published.
    out.append(tr.update(tick(4, counters(7, 300, timed=2), lsn="0/200")))
    assert out[-1].values["checkpoint.active"] == 1 and out[-1].events[0][0] == "checkpoint_end"
    assert not out[-1].finished
    out.append(tr.update(tick(5, counters(7, 300, timed=2, write_ms=2500, sync_ms=40), lsn="0/200")))
    assert out[-1].values["checkpoint.active"] == 0
    (row,) = out[-1].finished
    assert row["start_tick"] == 2 and row["end_tick"] == 4 and row["buffers"] == 200
    assert row["write_s"] == 2.5 and row["sync_s"] == 0.04 and row["kind"] == "time"
    assert row["start_t"] == 1001.5  # mid-tick estimate without a log


def test_log_mode_immediate_checkpoint_within_one_tick():
    tr = CheckpointTracker(CheckpointSettings(log_checkpoints=True), log_readable=True)
    assert tr.mode == "log"
    lines = (LOGS / "pg15.log").read_text().splitlines()
    start = next(ln for ln in lines if "starting: immediate" in ln)
    complete = lines[lines.index(start) + 1]
    tr.update(tick(0, counters(1, 0)))
    out = tr.update(tick(1, counters(1, 0), lines=[start, complete], lsn="0/200"))
    assert out.values["checkpoint.active"] == 1
    assert [e[0] for e in out.events] == ["checkpoint_start", "checkpoint_end"]
    out = tr.update(tick(2, counters(2, 203, write_ms=2, sync_ms=55), lsn="0/200"))
    assert out.values["checkpoint.active"] == 0
    (row,) = out.finished
    assert row["kind"] == "immediate" and row["source"] == "log"
    assert row["log_buffers"] == parse_log_line(complete)[1]["log_buffers"] and row["buffers"] == 203


def test_progress_follows_the_schedule_while_the_checkpointer_sleeps():
    tr = CheckpointTracker(SETTINGS, log_readable=False)
    tr.update(tick(0, counters(0, 0)))
    tr.update(tick(1, counters(1, 10, timed=1), wait="checkpointwritedelay"))
    out = tr.update(tick(4, counters(1, 40, timed=1), wait="checkpointwritedelay"))
    # elapsed 3.5 s since the mid-tick start, of a 30 s * 0.5 write phase
    assert out.values["checkpoint.progress"] == pytest.approx(3.5 / 15)
    assert out.values["checkpoint.time_progress"] == pytest.approx(3.5 / 30)


def test_ticks_that_do_not_see_the_checkpointer_keep_what_it_was_last_seen_doing():
    """With many processes pg_stat_activity is read every few ticks: between, busy and wait are
    unknown (None), not idle. A start is still told by busy after idle when last seen, and the
    progress follows the schedule while the checkpointer was last seen sleeping."""
    tr = CheckpointTracker(SETTINGS, log_readable=False)
    tr.update(tick(0, counters(0, 0), busy=False, wait="checkpointermain"))
    assert not tr.update(tick(1, counters(0, 0))).events  # not seen: nothing told
    out = tr.update(tick(2, counters(0, 0), busy=True, wait="checkpointwritedelay"))
    assert out.events[0][0] == "checkpoint_start" and out.values["checkpoint.active"] == 1
    tr.set_dirty_estimate(1000, 0)  # the buffers would say 4 %, the schedule more
    out = tr.update(tick(5, counters(0, 40)))  # not seen: it was sleeping on schedule
    assert out.values["checkpoint.progress"] == pytest.approx(3.5 / 15)
    out = tr.update(tick(6, counters(0, 50), busy=True, wait=""))  # seen on CPU: behind schedule
    assert out.values["checkpoint.progress"] == pytest.approx(50 / 1000)
