"""A slow PGDATA device for the findings tests: a loop device (direct I/O onto a file) whose writes
reach the disk through a blkio throttle on the lab server's processes. The kernel charges the loop's
I/O to the cgroup of the process that issued it, so the server's writes and fsyncs wait at the
throttle while the loop device shows them in flight: its util, await and queue are a slow disk's.
Root, loop devices, mount and the cgroup v1 blkio controller are needed (v2's io.max would do the
same; not written here); `SlowDeviceError` says which is missing (the tests skip on it)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


class SlowDeviceError(RuntimeError):
    pass


def _run(*argv: str) -> str:
    try:
        return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise SlowDeviceError(f"{argv[0]}: {exc}") from None


class SlowDevice:
    """`with SlowDevice(size_mb) as d:` a mounted ext4 on a loop device at d.mount (0755);
    d.throttle(pids, bytes_per_s) caps those processes' writes to it."""

    def __init__(self, size_mb: int = 1024):
        if os.geteuid() != 0:
            raise SlowDeviceError("not root: no loop device or cgroup")
        self.size_mb = size_mb
        self.image = self.loop = self.mount = self.cgroup = None

    def __enter__(self) -> SlowDevice:
        try:
            fd, image = tempfile.mkstemp(prefix="pgio-slow-", suffix=".img", dir="/var/tmp")
            os.close(fd)
            self.image = image
            os.truncate(image, self.size_mb * 2**20)
            self.loop = _run("losetup", "--find", "--show", "--direct-io=on", image)
            _run("mkfs.ext4", "-q", self.loop)
            self.mount = tempfile.mkdtemp(prefix="pgio-slow-")
            _run("mount", self.loop, self.mount)
            os.chmod(self.mount, 0o755)
        except BaseException:
            self.__exit__()
            raise
        return self

    @property
    def name(self) -> str:
        return os.path.basename(self.loop)

    def throttle(self, pids: list[int], bytes_per_s: int) -> None:
        st = os.stat(self.image)  # the backing file's disk: the loop's I/O reaches it as the writer's
        dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        v1 = Path("/sys/fs/cgroup/blkio")
        if not (v1 / "blkio.throttle.write_bps_device").exists():
            raise SlowDeviceError("no cgroup v1 blkio controller (blkio.throttle.write_bps_device)")
        self.cgroup = Path(tempfile.mkdtemp(prefix="pgio-slow-", dir=v1))
        (self.cgroup / "blkio.throttle.write_bps_device").write_text(f"{dev} {bytes_per_s}")
        for pid in pids:
            try:
                (self.cgroup / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                pass

    def __exit__(self, *exc) -> None:
        if self.cgroup is not None:
            home = self.cgroup.parent / "cgroup.procs"
            for pid in (self.cgroup / "cgroup.procs").read_text().split():
                try:
                    home.write_text(pid)
                except OSError:
                    pass
            try:
                self.cgroup.rmdir()
            except OSError:
                pass
        if self.mount:
            subprocess.run(["umount", "-l", self.mount], capture_output=True, timeout=60)
            os.rmdir(self.mount)
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], capture_output=True, timeout=60)
        if self.image:
            os.unlink(self.image)
