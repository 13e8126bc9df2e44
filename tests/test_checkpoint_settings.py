"""Every valid checkpoint setting is valid input, and the settings in force at each tick reach the panes.

Real clusters at the edges of checkpoint_completion_target, checkpoint_timeout and max_wal_size
are recorded while WAL is generated fast enough to trigger checkpoints; `record` must survive
and close its file with a stop event. A reload mid-session (checkpoint_timeout 5 min -> 30 s)
must show in the Checkpoint pane at once, live and in replay (the replayed tick's settings).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pgio_tui.sampler import Sampler
from pgio_tui.sources.checkpoint import CheckpointSettings, CheckpointTracker, TickInput
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.session import session_from_recording, session_from_sampler
from pgio_tui.tui.widgets.checkpoint_pane import CheckpointPane
from pgio_tui.tui.widgets.pane import View

ROOT = Path(__file__).resolve().parent.parent

EDGES = [
    {"checkpoint_completion_target": "0", "max_wal_size": "32MB", "min_wal_size": "32MB"},
    {"checkpoint_completion_target": "1", "max_wal_size": "32MB", "min_wal_size": "32MB"},
    {"checkpoint_timeout": "30s", "max_wal_size": "32MB", "min_wal_size": "32MB"},
    {"checkpoint_timeout": "1d"},
    {"max_wal_size": "2147483647MB"},
]


def _make_wal(cluster, stop: threading.Event) -> None:
    """Dirty pages and WAL as fast as one session can: ~2 MB per statement."""
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS filler (i int, pad text)")
        while not stop.is_set():
            conn.execute("INSERT INTO filler SELECT g, repeat('x', 200) FROM generate_series(1, 8000) g")
            conn.execute("UPDATE filler SET i = i + 1 WHERE i % 7 = 0")


@pytest.mark.slow
@pytest.mark.parametrize("settings", EDGES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_record_survives_every_checkpoint_setting(make_cluster, tmp_path, settings):
    cluster = make_cluster(**settings)
    out = tmp_path / "edge.pgio"
    stop = threading.Event()
    filler = threading.Thread(target=_make_wal, args=(cluster, stop))
    filler.start()
    try:
        r = subprocess.run([sys.executable, "-m", "pgio_tui", "record", "-d", cluster.conninfo(), "-o", str(out),
                            "--interval", "0.1", "--duration", "6", "--quiet"],
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        stop.set()
        filler.join()
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    with Recording(out) as rec:
        stops = rec.events(["stop"])
        assert [e.event.text for e in stops] == ["duration reached"]
        assert not rec.events(["error"])
        started = rec.events(["checkpoint_start"])
        if "32MB" in settings.get("max_wal_size", ""):  # the WAL we made must have triggered some
            assert started, "no checkpoint seen while filling a 32 MB max_wal_size"
        frames = list(rec.frames())
        assert {f.values.get("checkpoint.completion_target") for f in frames} == {
            float(settings.get("checkpoint_completion_target", 0.9))}


def test_tracker_with_completion_target_zero_shows_a_running_spread_checkpoint():
    """cct = 0: the checkpointer is never on schedule, so progress counts buffers (no division by 0)."""
    settings = CheckpointSettings(completion_target=0.0, log_checkpoints=True)
    tracker = CheckpointTracker(settings, log_readable=True)
    counters = {"started": 1, "timed": 0, "done": None, "buffers": 100, "slru": None, "write_ms": 0.0,
                "sync_ms": 0.0, "stats_reset": None}

    def tick(i, lines=(), buffers=100, wait="checkpointwritedelay"):
        return tracker.update(TickInput(tick=i, t=1000.0 + i, counters={**counters, "buffers": buffers},
                                        busy=True, checkpoint_lsn="0/100", checkpoint_time=900.0,
                                        redo_lsn="0/100", wal_pos=4096.0 * i, log_entries=[(None, ln) for ln in lines],
                                        wait=wait, dirty_buffers=400))

    tick(0)
    out = tick(1, ["2026-11-21 02:42:21.617 UTC [99] LOG:  checkpoint starting: wal"], buffers=150)
    assert out.values["checkpoint.active"] == 1 and out.values["checkpoint.completion_target"] == 0.0
    out = tick(2, buffers=300)
    assert out.values["checkpoint.progress"] == pytest.approx(200 / 400)


def _pane_text(history: FrameHistory, session, t1: float) -> str:
    view = View(history, session, history.t[0], t1)
    return "\n".join("".join(t for t, _ in line) for line in CheckpointPane.text_lines(view, 120))


def _next_timed_s(text: str) -> float:
    first = text.splitlines()[0]
    assert "next timed in" in first, text
    amount = first.split("next timed in ")[1].split(" ")[0]
    if amount.endswith("m") or "m" in amount:
        m, _, s = amount.partition("m")
        return float(m) * 60 + float(s.rstrip("s") or 0)
    return float(amount.rstrip("s"))


@pytest.mark.slow
def test_reloaded_checkpoint_timeout_reaches_the_pane_live_and_in_replay(make_cluster, tmp_path):
    cluster = make_cluster(checkpoint_timeout="5min")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    session = session_from_sampler(sampler)  # taken at start, as the live app does
    history = FrameHistory()
    path = tmp_path / "reload.pgio"
    with Recorder(path, meta=sampler.meta()) as rec:
        rec.set_settings(sampler.settings_rows())
        changed_at = None
        for frame in sampler.frames(duration=4.0):
            rec.write(frame)
            history.push(frame)
            if changed_at is None and frame.elapsed >= 1.5:
                with cluster.connect() as conn:
                    conn.execute("ALTER SYSTEM SET checkpoint_timeout = '30s'")
                    conn.execute("SELECT pg_reload_conf()")
                changed_at = frame.t
        sampler.close()
    assert any(e.event.kind == "setting_change" for e in history.events), "the reload was not seen"
    before = _pane_text(history, session, changed_at - 0.5)
    after = _pane_text(history, session, history.end_t)
    assert "of 5m" in before and _next_timed_s(before) > 60, before
    assert "of 30s" in after and _next_timed_s(after) <= 30, after
    assert session.setting_seconds("checkpoint_timeout") == 300  # the copy from the start is stale

    with Recording(path) as rec:  # replay: each tick shows its own settings
        replayed = FrameHistory()
        replayed.extend(rec.frames())
        rsession = session_from_recording(rec)
    assert "of 5m" in _pane_text(replayed, rsession, changed_at - 0.5)
    assert "of 30s" in _pane_text(replayed, rsession, replayed.end_t)


@pytest.mark.slow
@pytest.mark.matrix  # 14-17 count SLRU pages in the log's figure, so counters and log differ there
def test_last_checkpoint_line_uses_the_logs_figures(make_cluster, tmp_path):
    cluster = make_cluster(log_timezone="UTC")
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT g, repeat('x', 100) pad FROM generate_series(1, 15000) g")
        conn.execute("CHECKPOINT")
        conn.execute("UPDATE t SET g = g + 1")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    session = session_from_sampler(sampler)
    history = FrameHistory()
    for frame in sampler.frames(duration=3.0):
        history.push(frame)
        if frame.tick == 3:
            with cluster.connect() as conn:
                conn.execute("CHECKPOINT")
    sampler.close()
    assert history.checkpoints, "the CHECKPOINT was not recorded"
    row = history.checkpoints[-1]
    logged = [ln for ln in cluster.log_text().splitlines() if "checkpoint complete: wrote" in ln][-1]
    wrote = int(logged.split("wrote ")[1].split()[0])
    assert row["log_buffers"] == wrote
    last = _pane_text(history, session, history.end_t).splitlines()[-1]
    assert wrote < 1000  # shown exactly, so the log's figure and the counters' can be told apart
    assert f" {wrote} buf" in last and f"in {row['total_s']:.1f}s" in last, (last, logged)


@pytest.mark.slow
def test_bench_survives_completion_target_zero(make_cluster, tmp_path):
    """The reported crash: bench with checkpoint_completion_target = 0 died and killed pgbench."""
    cluster = make_cluster(checkpoint_completion_target="0", max_wal_size="32MB", min_wal_size="32MB")
    out = tmp_path / "bench.pgio"
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "bench", "pgbench", "-d", cluster.conninfo(), "--headless",
                        "--init-scale", "5", "--record", str(out), "--interval", "0.2", "--", "-T", "8", "-c", "4"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "division by zero" not in r.stderr
    with Recording(out) as rec:
        assert [e.event.text for e in rec.events(["stop"])] == ["workload ended"]
        assert rec.checkpoints(), "8 s of pgbench on a 32 MB max_wal_size made no checkpoint"
        assert rec.workloads()[0]["exit_code"] == 0
