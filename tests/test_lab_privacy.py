"""Lab clusters are private and die with the tool (issue 10, finding 1): only the server's user and
root can connect (the superuser runs programs as the server's user), there is no TCP listener, and
a SIGKILL of pgio-tui leaves no server running and, on the next run, no folder behind."""

from __future__ import annotations

import os
import pwd
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from test_demo import Demo, _postmaster, alive

from pgio_tui.workloads import cluster as cluster_mod
from pgio_tui.workloads import watchdog
from pgio_tui.workloads.cluster import LAB_USER, OWNER_FILE, Cluster

pytestmark = pytest.mark.pg


def psql_as(user: pwd.struct_passwd, cluster: Cluster) -> subprocess.CompletedProcess:
    """psql from the server's (reachable) binaries, run as `user`, through the cluster's socket."""
    psql = cluster._server_bindir / "psql"
    if not psql.exists():
        pytest.skip(f"no psql beside {cluster._server_bindir}")
    return subprocess.run([str(psql), "-XAtq", "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres",
                           "-d", "postgres", "-c", "select current_user"],
                          user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd="/",
                          capture_output=True, text=True, timeout=30)


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_only_the_owner_can_connect(pg_cluster):
    c = pg_cluster
    server_uid = pwd.getpwnam(c.os_user).pw_uid
    for p in (c.base_dir, c.datadir, c.sockdir):
        assert mode(p) == 0o700 and p.stat().st_uid == server_uid, p
    sock = c.sockdir / f".s.PGSQL.{c.port}"
    assert mode(sock) == 0o700
    with c.connect() as conn:  # the invoking user (root by privilege, else the server's own user)
        assert conn.execute("show listen_addresses").fetchone()[0] == ""
        assert conn.execute("show unix_socket_permissions").fetchone()[0] == "0700"
    if os.geteuid() != 0:
        pytest.skip("another local user needs root to impersonate")
    assert c.os_user == os.environ.get("PGIO_PG_USER", LAB_USER) and c.os_user != "nobody"
    owner = psql_as(pwd.getpwnam(c.os_user), c)
    assert owner.returncode == 0 and owner.stdout.strip() == "postgres", owner.stderr
    other = psql_as(pwd.getpwnam("nobody"), c)  # any other unprivileged local user
    assert other.returncode != 0 and "Permission denied" in other.stderr, other.stdout


def test_never_nobody(monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the server user is chosen only under root")
    monkeypatch.setenv("PGIO_PG_USER", "nobody")
    with pytest.raises(cluster_mod.ClusterError, match="must not run as nobody"):
        cluster_mod._server_user()


@pytest.mark.slow
def test_sigkill_of_pgio_tui_stops_the_server():
    demo = Demo("--duration", "600")
    datadir = Path(demo.wait_for(r"starting a lab cluster .* in (\S+)").group(1))
    postmaster = _postmaster(str(datadir))
    demo.wait_for(r"pgbench -i")
    demo.proc.send_signal(signal.SIGKILL)
    demo.finish()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (alive(postmaster) or datadir.parent.exists()):
        time.sleep(0.1)
    assert not alive(postmaster), "the lab server outlived a SIGKILL of pgio-tui by 10 s"
    assert not datadir.parent.exists(), "the lab folder was left behind"


def test_a_later_run_removes_stale_lab_folders(pg_bindir, tmp_path):
    root = Path(cluster_mod._temp_root(cluster_mod._server_user()))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = root / f"pgio-lab-stale{os.getpid()}"
    stale.mkdir()
    (stale / OWNER_FILE).write_text(f"{dead.pid} 1\n")
    mine = root / f"pgio-lab-mine{os.getpid()}"
    mine.mkdir()
    (mine / OWNER_FILE).write_text(watchdog.owner_mark(os.getpid()))
    foreign = root / f"pgio-lab-foreign{os.getpid()}"  # no owner mark: not ours to judge
    foreign.mkdir()
    try:
        c = Cluster(bindir=pg_bindir)
        c.destroy()
        assert not stale.exists() and mine.exists() and foreign.exists()
    finally:
        for p in (stale, mine, foreign):
            if p.exists():
                for f in p.iterdir():
                    f.unlink()
                p.rmdir()
