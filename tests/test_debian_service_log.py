"""Debian's packaged PostgreSQL as a service (no logging_collector): the log is found on the host anyway.

pg_createcluster/pg_ctlcluster start the server with its stderr in
/var/log/postgresql/postgresql-<major>-<name>.log and pg_current_logfile() NULL. Run as root on
the host, pgio-tui must find that file (the postmaster's stderr), use log mode, and record
checkpoints whose start, end and buffers match the log's lines. Skips where the Debian tools
or root are missing; the cluster is dropped afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest
from log_ticks import ticks_for

from pgio_tui.sampler import Sampler
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.cluster import free_port

MAJOR = "15"
NAME = f"pgiotest{os.getpid()}"  # two test runs at once must not share (or drop) one cluster
LINE = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[(?P<pid>\d+)\] LOG:  "
                  r"checkpoint (?P<what>starting|complete): (?P<rest>.*)$")


def _run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture
def debian_cluster():
    if shutil.which("pg_createcluster") is None or not Path(f"/usr/lib/postgresql/{MAJOR}/bin/postgres").exists():
        pytest.skip(f"Debian's pg_createcluster and PostgreSQL {MAJOR} are not installed")
    if os.geteuid() != 0:
        pytest.skip("pg_createcluster needs root")
    port = free_port()
    _run("pg_dropcluster", "--stop", MAJOR, NAME)  # a leftover of an interrupted run
    r = _run("pg_createcluster", MAJOR, NAME, "-p", str(port), "--", "--auth-local=peer")
    assert r.returncode == 0, r.stderr
    try:
        conf = Path(f"/etc/postgresql/{MAJOR}/{NAME}/conf.d/pgiotest.conf")
        conf.write_text("log_timezone = 'UTC'\nlog_checkpoints = on\nlc_messages = 'C'\n")
        r = _run("pg_ctlcluster", MAJOR, NAME, "start")
        assert r.returncode == 0, r.stderr
        _psql(port, "CREATE ROLE root SUPERUSER LOGIN")  # root connects by peer, as a DBA would
        yield port, Path(f"/var/log/postgresql/postgresql-{MAJOR}-{NAME}.log")
    finally:
        _run("pg_dropcluster", "--stop", MAJOR, NAME)


def _psql(port: int, sql: str) -> str:
    r = _run("runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-At", "-p", str(port), "-c", sql)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _logged(path: Path, ckpt_pid: int) -> list[dict]:
    out, cur = [], None
    for line in path.read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if not m or int(m["pid"]) != ckpt_pid:
            continue
        ts = datetime.strptime(m["ts"] + " +0000", "%Y-%m-%d %H:%M:%S.%f %z").timestamp()
        if m["what"] == "starting":
            cur = {"start": ts, "flags": m["rest"].strip()}
        elif cur is not None:
            cur.update(end=ts, wrote=int(re.match(r"wrote (\d+) buffers", m["rest"])[1]))
            out.append(cur)
            cur = None
    return out


@pytest.mark.slow
def test_debian_service_without_logging_collector_uses_log_mode(debian_cluster, tmp_path, capsys):
    port, logfile = debian_cluster
    conninfo = f"host=/var/run/postgresql port={port} dbname=postgres"
    assert _psql(port, "SHOW logging_collector").strip() == "off"
    assert _psql(port, "SELECT pg_current_logfile() IS NULL").strip() == "t"
    _psql(port, "CREATE TABLE t AS SELECT g, repeat('x', 100) pad FROM generate_series(1, 30000) g")
    sampler = Sampler(conninfo, interval=0.2)
    sampler.open()
    assert sampler.os_mode == "local"
    assert sampler.pg.features.log_path == str(logfile), sampler.pg.features.notes
    assert sampler.server.tracker.mode == "log", sampler.pg.features.notes
    path = tmp_path / "debian.pgio"
    with Recorder(path, meta=sampler.meta()) as rec:
        rec.set_settings(sampler.settings_rows())
        for frame in sampler.frames(duration=6.0):
            rec.write(frame)
            if frame.tick == 12:  # a forgery by an ordinary role: the same file, another PID
                _psql(port, "CREATE ROLE mallory; SET ROLE mallory; "
                            "DO $$ BEGIN RAISE LOG 'checkpoint starting: time'; END $$")
            if frame.tick in (5, 18):
                _psql(port, "UPDATE t SET g = g + 1")
                _psql(port, "CHECKPOINT")
        sampler.close()
    time.sleep(0.2)
    ckpt_pid = int(_psql(port, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"))
    logged = _logged(logfile, ckpt_pid)
    with Recording(path) as rec:
        ticks = [(f.tick, f.t) for f in rec.frames()]
        rows = rec.checkpoints()
        t0, t1 = ticks[0][1], ticks[-1][1]
        in_window = [c for c in logged if t0 < c["start"] and c["end"] < t1]
        assert len(in_window) == 2 and len(rows) == 2, (rows, in_window)
        assert "checkpoint starting: time" in logfile.read_text()  # the forgery is in the file, not in rows
        with capsys.disabled():
            print()
        for row, c in zip(rows, in_window):
            assert row["source"] == "log" and row["kind"] == "immediate"
            assert row["start_tick"] in ticks_for(ticks, c["start"]), (row, c)
            assert row["end_tick"] in ticks_for(ticks, c["end"]), (row, c)
            assert abs(row["start_t"] - c["start"]) < 0.25 and abs(row["end_t"] - c["end"]) < 0.25
            assert row["log_buffers"] == c["wrote"]
            with capsys.disabled():
                print(f"debian {MAJOR} service: log start {c['start']:.3f} end {c['end']:.3f} wrote {c['wrote']} | "
                      f"recorded start {row['start_t']:.3f} end {row['end_t']:.3f} (ticks {row['start_tick']}-"
                      f"{row['end_tick']}) log_buffers {row['log_buffers']} counter buffers {row['buffers']}")


@pytest.mark.slow
@pytest.mark.matrix
def test_pg_ctl_stderr_log_without_collector_is_read_on_the_host(make_cluster, tmp_path):
    """13-18: pg_ctl -l FILE, logging_collector off: the postmaster's stderr is the log."""
    cluster = make_cluster(logging_collector="off", log_timezone="UTC")
    with cluster.connect() as conn:
        assert conn.execute("SELECT pg_current_logfile()").fetchone()[0] is None
        conn.execute("CREATE TABLE t AS SELECT g FROM generate_series(1, 20000) g")
    sampler = Sampler(cluster.conninfo(), interval=0.2)
    sampler.open()
    assert sampler.pg.features.log_path == str(cluster.base_dir / "startup.log"), sampler.pg.features.notes
    assert sampler.server.tracker.mode == "log"
    frames = []
    for frame in sampler.frames(duration=2.0):
        frames.append(frame)
        if frame.tick == 3:
            with cluster.connect() as conn:
                conn.execute("UPDATE t SET g = g + 1")
                conn.execute("CHECKPOINT")
    sampler.close()
    rows = [c for f in frames for c in f.checkpoints]
    wrote = [int(m[1]) for m in re.finditer(r"checkpoint complete: wrote (\d+) buffers",
                                             (cluster.base_dir / "startup.log").read_text())]
    assert len(rows) == 1 and rows[0]["source"] == "log" and rows[0]["log_buffers"] == wrote[-1], (rows, wrote)
