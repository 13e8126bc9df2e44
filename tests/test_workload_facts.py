"""The user's command, how a workload ended and what failed, as info, replay and the report show
them (issue 11: internal `-P 1 -l --log-prefix=…` arguments on the replay timeline; `info` saying
"no gaps" beside "gap 1" and not saying a file was never closed)."""

from __future__ import annotations

import shutil

from pgio_tui.frame import Event, Frame
from pgio_tui.store.export import describe
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.replay import workload_text
from pgio_tui.workload_facts import workload_command, workload_outcome

T0 = 1_700_000_000.0
ARGV = ["/usr/lib/postgresql/15/bin/pgbench", "-P", "1", "-l", "--log-prefix=/tmp/pgio-tui-pgbench-x/pgbench_log",
        "-c", "4", "-T", "60"]
PARAMS = {"user_args": ["-c", "4", "-T", "60"], "added_args": ["-P", "1", "-l", "--log-prefix=/tmp/x"]}


def test_the_users_command():
    assert workload_command({"kind": "pgbench", "argv": ARGV, "params": PARAMS}) == "pgbench -c 4 -T 60"
    assert workload_command({"kind": "pgbench", "argv": ["/bin/pgbench", "-c", "2"]}) == "pgbench -c 2"


def test_outcomes():
    assert workload_outcome({"exit_code": 0, "summary": {"failed": 0}}) == "exit 0"
    assert workload_outcome({"exit_code": 130, "summary": {"interrupted": True}}) == \
        "ended early (exit 130: interrupted)"
    assert workload_outcome({"exit_code": 0, "summary": {"failed": 12, "failed_pct": 0.5}}) == \
        "exit 0, 12 failed transactions (0.5 %)"
    assert workload_outcome({"exit_code": 0, "summary": {"deadlocks": 3}}) == "exit 0, 3 deadlocks"
    assert workload_outcome({"exit_code": 2, "summary": None}) == "failed (exit 2)"
    assert workload_outcome({"exit_code": None}).startswith("no exit status")


def _record(path, *, close: bool):
    rec = Recorder(path, meta={"interval_s": 1.0})
    wid = rec.workload_start("pgbench", ARGV, PARAMS, t=T0)
    for i in range(6):
        f = Frame(tick=i, t=T0 + i, elapsed=i, dt=None if i == 0 else 1.0, values={"latency.tps": 1.0})
        if i == 2:
            f.events.append(Event("gap", "PostgreSQL unreachable: connection refused"))
        rec.write(f)
    rec.workload_stop(wid, 130, {"interrupted": True, "failed": 2}, t=T0 + 5)
    if close:
        rec.close("stopped")
    else:
        rec.flush()
    return rec


def test_info_and_replay(tmp_path):
    path = tmp_path / "r.pgio"
    _record(path, close=True)
    with Recording(path) as r:
        text = describe(r)
        assert workload_text(r) == "pgbench -c 4 -T 60"
    assert "none missed" in text and "no gaps" not in text  # no tick is missing ...
    assert "gap events   tick 2: PostgreSQL unreachable" in text  # ... but the server was away
    assert "pgbench: pgbench -c 4 -T 60  (0:00:05, ended early (exit 130: interrupted), 2 failed transactions)" in text
    assert "closed" not in text


def test_info_says_a_file_was_never_closed(tmp_path):
    path = tmp_path / "open.pgio"
    rec = _record(path, close=False)
    try:
        copy = tmp_path / "copy.pgio"  # what a killed recorder leaves: the ticks, no stop event
        shutil.copy(path, copy)
        for ext in ("-wal", "-shm"):
            if (tmp_path / f"open.pgio{ext}").exists():
                shutil.copy(tmp_path / f"open.pgio{ext}", tmp_path / f"copy.pgio{ext}")
        with Recording(copy) as r:
            assert "closed       no: the recording has no stop event" in describe(r)
    finally:
        rec.close()
