"""Forged checkpoint lines: any role can RAISE LOG 'checkpoint starting: ...'; only the checkpointer counts.

A real cluster is recorded while an ordinary role writes forgeries into the server log (plain,
with a newline and a fake prefix carrying the checkpointer's PID, a fake 'too frequently'
warning), and one real CHECKPOINT runs. The recording must hold the real checkpoint and nothing
of the forgeries, for stderr (log_line_prefix with %p), csvlog and jsonlog; a prefix without %p
cannot tell them apart, so the recording falls back to counters and says why.
"""

from __future__ import annotations

import threading

import pytest

from pgio_tui.sampler import Sampler
from pgio_tui.sources.serverlog import CheckpointerLines, prefix_pattern
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.pg_binaries import server_version

FAKE_START = "checkpoint starting: time"
FAKE_END = ("checkpoint complete: wrote 123456 buffers (99.0%); 0 WAL file(s) added, 0 removed, 0 recycled; "
            "write=1.000 s, sync=0.100 s, total=1.200 s; sync files=3, longest=0.050 s, average=0.030 s; "
            "distance=100 kB, estimate=100 kB")


def forge(cluster, ckpt_pid: int) -> None:
    with cluster.connect() as conn:
        conn.execute("CREATE ROLE mallory LOGIN")
    with cluster.connect(user="mallory") as conn:
        for msg in (FAKE_START, FAKE_END, "checkpoints are occurring too frequently (2 seconds apart)",
                    f"x\n2026-01-01 00:00:00.000 UTC [{ckpt_pid}] LOG:  {FAKE_START}",
                    f'x\n2026-01-01 00:00:00.000 UTC,,,{ckpt_pid},,,,,,,,LOG,00000,"{FAKE_START}"',
                    f'x\n{{"timestamp":"2026-01-01 00:00:00.000 UTC","pid":{ckpt_pid},'
                    f'"backend_type":"checkpointer","message":"{FAKE_START}"}}'):
            conn.execute("SELECT set_config('application_name', 'checkpointer', false)")
            conn.execute(f"DO $x$ BEGIN RAISE LOG '%', {_lit(msg)}; END $x$")


def _lit(text: str) -> str:
    return "E'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def record_with_forgeries(cluster, path, real_checkpoint: bool = True):
    with cluster.connect() as conn:
        ckpt_pid = conn.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").fetchone()[0]
        conn.execute("CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    with Recorder(path, meta=sampler.meta()) as rec:
        rec.set_settings(sampler.settings_rows())
        for frame in sampler.frames(duration=3.0):
            rec.write(frame)
            if frame.tick == 3:
                threading.Thread(target=forge, args=(cluster, ckpt_pid)).start()
            if frame.tick == 10 and real_checkpoint:
                with cluster.connect() as conn:
                    conn.execute("UPDATE t SET g = g + 1")
                    conn.execute("CHECKPOINT")
        sampler.close()
    return sampler


LOG_SETUPS = {
    "stderr": {},
    "stderr-padded": {"log_line_prefix": "%m %-8p %q%u@%d %a "},
    "csvlog": {"log_destination": "csvlog"},
    "jsonlog": {"log_destination": "jsonlog"},
}


@pytest.mark.slow
@pytest.mark.matrix
@pytest.mark.parametrize("setup", list(LOG_SETUPS))
def test_forged_checkpoint_lines_ignored(make_cluster, pg_bindir, tmp_path, setup):
    if setup == "jsonlog" and server_version(pg_bindir)[1] < 15:
        pytest.skip("jsonlog is new in PostgreSQL 15")
    cluster = make_cluster(log_timezone="UTC", **LOG_SETUPS[setup])
    path = tmp_path / "forged.pgio"
    sampler = record_with_forgeries(cluster, path)
    assert sampler.server.tracker.mode == "log", sampler.pg.features.notes
    log = "".join(p.read_text(errors="replace") for p in (cluster.datadir / "log").iterdir())
    assert "123456 buffers" in log, "the forgery did not reach the server log"
    with Recording(path) as rec:
        rows = rec.checkpoints()
        assert len(rows) == 1 and rows[0]["kind"] == "immediate" and rows[0]["source"] == "log", rows
        assert rows[0]["log_buffers"] != 123456
        starts = rec.events(["checkpoint_start"])
        assert [e.event.text for e in starts] == ["checkpoint starting: immediate"]
        assert not [e for e in rec.events(["note"]) if "too frequently" in e.event.text]
        active = [f.tick for f in rec.frames() if f.values.get("checkpoint.active")]
        assert active and min(active) >= 10, active  # nothing at the forgeries' ticks (3-5)


@pytest.mark.slow
def test_prefix_without_pid_falls_back_to_counters_and_says_why(make_cluster, tmp_path):
    cluster = make_cluster(log_line_prefix="%m ", log_timezone="UTC")
    path = tmp_path / "nopid.pgio"
    sampler = record_with_forgeries(cluster, path, real_checkpoint=False)
    assert sampler.server.tracker.mode == "counters"
    with Recording(path) as rec:
        assert not rec.checkpoints() and not rec.events(["checkpoint_start"])
        notes = [e.event.text for e in rec.events(["note"])]
        assert any("has no %p" in n for n in notes), notes
        assert any("has no %p" in n for n in rec.meta["features"]["notes"])


def test_prefix_patterns_match_only_the_checkpointers_form():
    pattern, has_pid, _ = prefix_pattern("%m [%p] %q%u@%d ")
    assert has_pid
    line = "2026-11-21 02:42:21.617 UTC [99] LOG:  checkpoint starting: time"
    assert pattern.match(line)
    assert not pattern.match("2026-11-21 02:42:21.617 UTC [99] bob@db LOG:  checkpoint starting: time")
    assert not pattern.match("\t2026-11-21 02:42:21.617 UTC [99] LOG:  checkpoint starting: time")
    lines = CheckpointerLines("stderr", "%m [%p] %q%u@%d ")
    assert lines.entries([line], 99) == [("2026-11-21 02:42:21.617 UTC", "checkpoint starting: time")]
    assert lines.entries([line], 100) == [] and lines.entries([line], None) == []
    assert not CheckpointerLines("stderr", "%m %q[%p] ").usable  # %p only for sessions
    assert CheckpointerLines("stderr", "%t [%b] ").entries(
        ["2026-11-21 02:42:21 UTC [checkpointer] LOG:  checkpoint starting: wal"], None) == [
        ("2026-11-21 02:42:21 UTC", "checkpoint starting: wal")]
