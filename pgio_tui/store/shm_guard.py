"""The recorder's guard against a `-shm` file made immutable (or append-only) while it records.

SQLite keeps a WAL file's index in the `-shm` file, mapped into memory and shared with readers. Once
root runs `chattr +i` on it, the next write to the mapping, even by a read, makes the kernel send
SIGBUS: the recorder died with no message, and would again when closing. So the recorder looks at
the file's flags before each commit (one ioctl, a few microseconds; nothing on file systems without
them) and, when it is frozen, maps its pages privately in place (copy-on-write of the same
content) so that SQLite can still finish and close the file, then stops with one line. A flag set
between the look and the commit (a second) is not caught.
"""

from __future__ import annotations

import array
import fcntl
import os

FS_IOC_GETFLAGS = 0x80086601  # linux/fs.h, _IOR('f', 1, long) on 64-bit; the kernel reads an int
FROZEN_FLAGS = 0x10 | 0x20  # FS_IMMUTABLE_FL (chattr +i), FS_APPEND_FL (chattr +a)


def frozen(path: str | os.PathLike) -> bool:
    """Whether the file at `path` is immutable or append-only (False when it is missing, or its
    file system has no such flags)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
        return bool(flags[0] & FROZEN_FLAGS)
    except OSError:
        return False
    finally:
        os.close(fd)


def map_privately(path: str | os.PathLike) -> int:
    """Replace this process's shared mappings of `path` by private copy-on-write ones of the same
    pages at the same addresses (writes then stay in this process). Returns how many were."""
    import ctypes
    import mmap

    real = os.path.realpath(path)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    with open("/proc/self/maps") as f:
        ranges = [line.split(maxsplit=5) for line in f]
    fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
    done = 0
    try:
        for fields in ranges:
            if len(fields) == 6 and fields[5].rstrip("\n") == real and fields[1][3] == "s":  # rw-s: shared
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                got = libc.mmap(lo, hi - lo, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | 0x10,  # MAP_FIXED
                                fd, int(fields[2], 16))
                done += got == lo
    finally:
        os.close(fd)
    return done
