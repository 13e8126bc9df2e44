"""Who a lab server runs as when we are root, and how its files become reachable to that user.

PostgreSQL refuses to run as root: under root the server runs as LAB_USER (or PGIO_PG_USER), its
temporary folders live where that user may go, and binaries it cannot reach are linked or copied.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from pgio_tui.workloads.pg_binaries import TIMEOUT_S, ClusterError

LAB_USER = "pgio-lab"  # the OS user lab servers run as when we are root (created when missing)
MIRROR_DIR = "pgbin"  # in a lab's folder: the server's binaries when its user cannot reach them




def server_user() -> pwd.struct_passwd | None:
    """Who the server runs as when we are root (None: as ourselves): PGIO_PG_USER, else LAB_USER,
    created with useradd when missing. Never root, never `nobody` (shared by other daemons: its
    files and processes are theirs to reach)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("PGIO_PG_USER") or LAB_USER
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        if name != LAB_USER:
            raise ClusterError(f"PGIO_PG_USER={name}: no such user; unset it to use {LAB_USER}") from None
        user = create_lab_user()
    if user.pw_uid == 0 or user.pw_name == "nobody" or user.pw_uid == 65534:
        raise ClusterError(f"the lab server must not run as {user.pw_name}: set PGIO_PG_USER to a dedicated "
                           f"unprivileged user, or unset it to use {LAB_USER}")
    return user


def create_lab_user() -> pwd.struct_passwd:
    try:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--comment", "pgio-tui lab clusters", LAB_USER],
                       capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        pass
    try:  # made now, or by a concurrent run
        return pwd.getpwnam(LAB_USER)
    except KeyError:
        raise ClusterError(f"running as root and cannot create the lab user {LAB_USER}: create it "
                           f"(useradd --system --user-group {LAB_USER}) or set PGIO_PG_USER") from None


def can_reach(path: Path, user: pwd.struct_passwd | None) -> bool:
    """Whether `user` may traverse path and all its parents (root-owned homes are often 0700)."""
    if user is None:
        return True
    gids = set(os.getgrouplist(user.pw_name, user.pw_gid))
    for d in [path, *path.parents]:
        st = d.stat()
        bit = stat.S_IXUSR if st.st_uid == user.pw_uid else stat.S_IXGRP if st.st_gid in gids else stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def temp_root(user: pwd.struct_passwd | None) -> Path:
    """A temporary directory the server user can reach."""
    for d in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        if Path(d).is_dir() and can_reach(Path(d), user):
            return Path(d)
    name = user.pw_name if user is not None else f"uid {os.geteuid()}"
    raise ClusterError(f"no temporary directory reachable by user {name}: set TMPDIR to one")


def reachable_bindir(bindir: Path, user: pwd.struct_passwd | None, lab_dir: Path) -> Path:
    """bindir, or a hardlinked mirror of its install tree in the lab's own folder (`lab_dir`, made
    with mkdtemp: no fixed name another user could take first) when the server user cannot reach it.

    Binaries under /root (a pip wheel, the pg-matrix cache) are out of reach of `postgres`; the
    mirror costs no space when hardlinks work and one copy when they do not, and goes with the lab
    (destroy, the watchdog, the stale-lab cleanup).
    """
    bindir = bindir.resolve()
    if can_reach(bindir, user):
        return bindir
    tree = bindir.parent
    dest = lab_dir / MIRROR_DIR
    # A wheel's binaries find their shared libraries in <package>.libs beside the package
    # (auditwheel's layout, RPATH $ORIGIN/../../../<package>.libs): mirror that shape too.
    parts = {Path(tree.parent.name, tree.name): tree}
    wheel_libs = tree.parent.parent / f"{tree.parent.name}.libs"
    if wheel_libs.is_dir():
        parts[Path(wheel_libs.name)] = wheel_libs
    mirrored = dest / tree.parent.name / tree.name / bindir.name
    if not (mirrored / "postgres").is_file():
        dest.mkdir(mode=0o755, exist_ok=True)
        for rel, src in parts.items():
            shutil.copytree(src, dest / rel, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)
    return mirrored


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
