"""`os.page_cache=SIZE`: a cap on the page cache the server may use, by the cgroup memory limit of
its processes — the shared_buffers × page-cache experiment without touching the rest of the host.

The server's processes (the postmaster and its children; backends forked later inherit it) are moved
into a cgroup of ours beside them (v1: a child of the postmaster's memory cgroup; v2: a sibling, since
a v2 cgroup with processes hands no controller on), whose limit is SIZE + the processes' memory
when capped + PROCESS_ALLOWANCE, plus shared_buffers when the server was (re)started just before the move: page cache read by the
server is charged to that cgroup, and so is shared memory first touched by its backends (the
buffers, after a restart) and the processes' own memory, which without swap cannot be reclaimed; so
the page cache is what is left, about SIZE. A memory page is charged once, to the cgroup of the
process that first touched it: buffers used before the move stay charged where they were, hence the
restart. What the cgroup held at the end of a run (page cache, shared memory, process memory, from
its memory.stat) is kept with the run, so the cap is checked, not assumed.

Pages cached before the first cap were charged elsewhere and would stay: `evict` drops PGDATA's
clean pages from the page cache once (posix_fadvise DONTNEED, file by file, after a CHECKPOINT);
from then on every page the server reads is charged to the cap, and a lower cap reclaims at once.

cgroup v2 (`memory.max`, where its root lists the memory controller) or v1 (`memory.limit_in_bytes`),
whichever holds the memory controller on this host; neither usable: PageCacheError, one line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pgio_tui import format as fmt
from pgio_tui.experiments.plan import PAGE_CACHE

NAME = PAGE_CACHE
PROCESS_ALLOWANCE = 16 * 2**20  # room for the processes' memory to grow (new backends), beyond what it is at the cap
class PageCacheError(RuntimeError):
    """os.page_cache cannot be applied here: one line that says why."""


def parse_size(text: str) -> int:
    """`256MB`, `1GB`, `512kB`, bytes; PostgreSQL's units (1024-based)."""
    try:
        size = fmt.parse_size(text)
    except ValueError:
        raise PageCacheError(f"{NAME}={text!r}: give a size like 256MB or 1GB") from None
    if size < 2**20:
        raise PageCacheError(f"{NAME}={text}: at least 1MB")
    return size


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, type, options) of the cgroup file systems."""
    out: list[tuple[str, str, str]] = []
    try:
        text = Path("/proc/self/mounts").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            out.append((parts[1].replace("\\040", " "), parts[2], parts[3]))
    return out


def hierarchy() -> tuple[int, Path]:
    """(version, mount point) of the hierarchy that has the memory controller."""
    for point, kind, _ in _mounts():
        if kind == "cgroup2":
            try:
                if "memory" in Path(point, "cgroup.controllers").read_text().split():
                    return 2, Path(point)
            except OSError:
                pass
    for point, kind, options in _mounts():
        if kind == "cgroup" and "memory" in options.split(","):
            return 1, Path(point)
    raise PageCacheError(f"{NAME}: this host has no cgroup memory controller (neither v2 memory.max nor v1 "
                         "memory.limit_in_bytes): the page cache cannot be capped here")


def _cgroup_of(pid: int, version: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        num, ctrls, path = line.split(":", 2)
        if (version == 2 and num == "0" and ctrls == "") or (version == 1 and "memory" in ctrls.split(",")):
            return path
    raise PageCacheError(f"{NAME}: process {pid} is in no memory cgroup")


def server_pids(postmaster: int) -> list[int]:
    """The postmaster and its children (backends, background processes)."""
    pids = [postmaster]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                pids.append(int(entry))
    return pids


class Cap:
    """The cgroup of one experiment; `set` moves the server in and sets the limit, `release` moves
    it back and removes the cgroup (what the experiment changed, put back)."""

    def __init__(self, tag: str):
        self.version, self.mount = hierarchy()
        self.tag = re.sub(r"[^A-Za-z0-9_.-]", "_", tag)
        self.path: Path | None = None
        self.home: Path | None = None  # where the server's processes were, and go back to
        self.limit: int | None = None

    def _limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    def set(self, postmaster: int, size: int, shared_buffers: int) -> dict[str, Any]:
        """Cap the server (its postmaster pid; after a restart, the new one) at size + shared_buffers
        (0 when its buffers are charged elsewhere) + PROCESS_ALLOWANCE. Returns the facts kept."""
        home = self.mount / _cgroup_of(postmaster, self.version).lstrip("/")
        if self.path is not None and home == self.path:
            home = self.home or home  # already inside ours (no restart since the last run)
        elif self.path is None:
            self.home = home
            # v1: a child of the server's cgroup. v2 lets no cgroup with processes hand a controller
            # on, so there: a sibling (its parent already hands on memory when home has it), or a
            # child of the root, which may.
            parent = home
            try:
                if self.version == 2 and home != self.mount:
                    if "memory" not in (home / "cgroup.controllers").read_text().split():
                        raise PageCacheError(f"{NAME}: the server's cgroup {home} has no memory controller; "
                                             "this host allows no cgroup memory limit here")
                    parent = home.parent
                elif self.version == 2:
                    (home / "cgroup.subtree_control").write_text("+memory")
                self.path = parent / f"pgio-tui-{self.tag}"
                self.path.mkdir(exist_ok=True)
            except OSError as exc:
                self.path = None
                raise PageCacheError(f"{NAME}: cannot create a cgroup under {parent} ({exc.strerror}); "
                                     "a lab cluster or root is needed") from None
        for pid in server_pids(postmaster):
            try:
                (self.path / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                continue  # a backend that ended meanwhile
            except OSError as exc:
                raise PageCacheError(f"{NAME}: cannot move the server's process {pid} into {self.path} "
                                     f"({exc.strerror})") from None
        anon = self.usage().get("anon_bytes", 0)
        limit = size + shared_buffers + anon + PROCESS_ALLOWANCE
        self._write(self._limit_file(), str(limit))
        self.limit = limit
        return {"cgroup": str(self.path), "cgroup_version": self.version, "limit_file": self._limit_file(),
                "limit_bytes": limit, "page_cache_bytes": size, "shared_buffers_in_limit_bytes": shared_buffers,
                "process_bytes": anon, "process_allowance_bytes": PROCESS_ALLOWANCE}

    def _write(self, name: str, value: str) -> None:
        if self.path is None:
            raise PageCacheError(f"{NAME}: no cgroup made yet to write {name} in")
        try:
            (self.path / name).write_text(value)
        except OSError as exc:
            raise PageCacheError(f"{NAME}: cannot write {value} to {self.path / name} ({exc.strerror}); "
                                 "this host allows no cgroup memory limit here") from None

    def usage(self) -> dict[str, int]:
        """What the cgroup holds now: page cache (file pages less shared memory), shared memory,
        process memory, in bytes (memory.stat)."""
        if self.path is None:
            return {}
        try:
            stat = dict(line.split() for line in (self.path / "memory.stat").read_text().splitlines()
                        if len(line.split()) == 2)
        except OSError:
            return {}
        n = {k: int(v) for k, v in stat.items() if v.isdigit()}
        if self.version == 2:
            file, anon = n.get("file", 0), n.get("anon", 0)
        else:
            file, anon = n.get("cache", 0), n.get("rss", 0)
        shmem = n.get("shmem", 0)
        return {"page_cache_bytes": max(0, file - shmem), "shmem_bytes": shmem, "anon_bytes": anon}

    def release(self) -> None:
        """Every process back where it came from, the cgroup removed."""
        if self.path is None or self.home is None or not self.path.exists():
            return
        try:
            pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                (self.home / "cgroup.procs").write_text(str(pid))
            except OSError:
                pass  # ended meanwhile
        try:
            self.path.rmdir()
        except OSError as exc:
            raise PageCacheError(f"{NAME}: cannot remove {self.path} ({exc.strerror})") from None
        self.path = None


def evict(datadir: str | Path) -> int:
    """Drop PGDATA's clean pages from the page cache; returns the files advised."""
    n = 0
    for root, _dirs, files in os.walk(Path(datadir) / "base"):
        for name in files:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n
