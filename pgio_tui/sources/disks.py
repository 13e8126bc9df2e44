"""Block devices: /proc/diskstats turned into iostat -x figures, and directories mapped to devices.

The rates use sysstat's own formulas (iostat -x's r_await, w_await, aqu-sz, %util) so a user can check
a tick against `iostat -x`; the tests hold them to iostat's printed figures on captured snapshots. Which
devices hold PGDATA, pg_wal and tablespaces is found through /sys, via a ProcReader so it also works
through SQL on the database host.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from pgio_tui.frame import DEVICE_FIELDS
from pgio_tui.sources.procfs import LOCAL, PolledSource, ProcReader


class DiskCounters(NamedTuple):
    """One /proc/diskstats line's counters (fields 1-17; discard and flush are 0 on older kernels)."""

    rd_ios: int
    rd_merges: int
    rd_sectors: int
    rd_ticks: int  # ms, 32-bit
    wr_ios: int
    wr_merges: int
    wr_sectors: int
    wr_ticks: int  # ms, 32-bit
    in_flight: int  # gauge
    io_ticks: int  # ms with >= 1 request in flight, 32-bit
    time_in_queue: int  # weighted ms, 32-bit
    dc_ios: int = 0
    dc_merges: int = 0
    dc_sectors: int = 0
    dc_ticks: int = 0
    fl_ios: int = 0
    fl_ticks: int = 0


# Fields the kernel prints as unsigned long: they only grow, so a decrease means the device was
# re-created (or its stats reset). The ms fields are unsigned int and wrap at 2**32.
_WIDE = ("rd_ios", "rd_merges", "rd_sectors", "wr_ios", "wr_merges", "wr_sectors",
         "dc_ios", "dc_merges", "dc_sectors", "fl_ios")
_WRAP = 2**32


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """`/proc/diskstats` as {device name: counters}, in file order.

    Lines with 11 (kernel < 4.18), 15 (< 5.5) or 17 counters are read; lines with fewer (pre-2.6.25
    partitions) are skipped and counters beyond the 17th ignored.
    """
    out: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 14:
            out[parts[2]] = DiskCounters(*map(int, parts[3:20]))
    return out


def diskstats_of(text: str, names: frozenset[str]) -> dict[str, DiskCounters]:
    """parse_diskstats(text) restricted to the devices `names`: other lines are not split into
    their counters."""
    out: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        head = line.split(None, 3)
        if len(head) == 4 and head[2] in names:
            parts = line.split()
            if len(parts) >= 14:
                out[parts[2]] = DiskCounters(*map(int, parts[3:20]))
    return out


def iostat(prev: DiskCounters, cur: DiskCounters, dt_s: float | None) -> dict[str, float | None]:
    """DEVICE_FIELDS between two samples `dt_s` seconds apart, exactly as `iostat -x` computes them.

    All values are None when dt is unknown or a 64-bit counter went backwards (device re-created):
    an unknown tick is better than a garbage one.
    """
    if not dt_s or dt_s <= 0 or any(getattr(cur, f) < getattr(prev, f) for f in _WIDE):
        return dict.fromkeys(DEVICE_FIELDS)
    ms = dt_s * 1000.0
    reads, writes, flushes = cur.rd_ios - prev.rd_ios, cur.wr_ios - prev.wr_ios, cur.fl_ios - prev.fl_ios
    return {
        "r_s": reads / dt_s,
        "w_s": writes / dt_s,
        "rkb_s": (cur.rd_sectors - prev.rd_sectors) / 2 / dt_s,
        "wkb_s": (cur.wr_sectors - prev.wr_sectors) / 2 / dt_s,
        "r_await_ms": (cur.rd_ticks - prev.rd_ticks) % _WRAP / reads if reads else 0.0,
        "w_await_ms": (cur.wr_ticks - prev.wr_ticks) % _WRAP / writes if writes else 0.0,
        "aqu_sz": (cur.time_in_queue - prev.time_in_queue) % _WRAP / ms,
        "util_pct": 100.0 * ((cur.io_ticks - prev.io_ticks) % _WRAP) / ms,
        "f_s": flushes / dt_s,
        "f_await_ms": (cur.fl_ticks - prev.fl_ticks) % _WRAP / flushes if flushes else 0.0,
    }


_PSEUDO = re.compile(r"(loop|ram|zram|sr|fd|nbd)\d+")


def parent_disk(name: str, names) -> str | None:
    """The whole disk a partition belongs to, by the kernel's naming rule, or None if `name` is not one.

    The kernel names partitions disk + N, or disk + "p" + N when the disk's name ends in a digit
    (sda1, sdp1, nvme0n1p1, mmcblk0p2, md127p1, loop0p1); `names` are the devices that exist.
    """
    base = name.rstrip("0123456789")
    if not base or base == name:
        return None
    if base.endswith("p") and base[:-1][-1:].isdigit() and base[:-1] in names:
        return base[:-1]
    return base if not base[-1].isdigit() and base in names else None


def default_devices(stats: dict[str, DiskCounters]) -> list[str]:
    """Devices worth a row when the user named none: whole disks, dm-* and md* that have done I/O.

    Partitions are left out (the disk line already includes them) and so are loop, ram, zram, sr,
    fd and nbd devices; a device holding the data directory is added by the caller from
    device_roles() whatever its kind.
    """
    return [
        name
        for name, c in stats.items()
        if (c.rd_ios or c.wr_ios) and not _PSEUDO.fullmatch(name) and parent_disk(name, stats) is None
    ]


class DiskSource(PolledSource):
    """Samples /proc/diskstats once per tick and returns iostat -x figures per device.

    `sample(dt)` takes the tick duration from the caller so every source of a tick divides by the
    same dt (iostat itself uses /proc/uptime deltas, 10 ms resolution). With `devices=None` the
    default_devices() of each sample are reported; a named device missing from diskstats gets a row
    of None. Rows are None on the first sample and whenever dt is unknown.
    """

    def __init__(self, reader: ProcReader = LOCAL, devices: list[str] | None = None):
        self.reader = reader
        self.devices = devices
        self._prev: dict[str, DiskCounters] = {}

    def sample(self, dt: float | None) -> dict[str, dict[str, float | None]]:
        text = self._read("/proc/diskstats") or ""
        stats = parse_diskstats(text) if self.devices is None else diskstats_of(text, frozenset(self.devices))
        prev, self._prev = self._prev, stats
        names = self.devices if self.devices is not None else default_devices(stats)
        out: dict[str, dict[str, float | None]] = {}
        for name in names:
            cur, old = stats.get(name), prev.get(name)
            out[name] = iostat(old, cur, dt) if cur and old else dict.fromkeys(DEVICE_FIELDS)
        return out


# --- directories to devices --------------------------------------------------------------------

def devices_for_path(path: str, reader: ProcReader = LOCAL) -> list[str]:
    """The block devices under a directory: its disk first, then any devices it is stacked on.

    A partition maps to its whole disk; a dm or md device also brings the devices in its slaves/,
    recursively down to the disks. Locally the path is resolved (symlinks followed) and stat()ed;
    when its st_dev has major 0 (btrfs, overlayfs, tmpfs, NFS) or the reader is not local (no stat,
    no symlinks), the mount holding it in /proc/self/mountinfo names the source device.
    Returns [] when no block device can be found (missing path, tmpfs, NFS, unreadable /sys);
    never raises.
    """
    try:
        names: list[str] = []
        if reader.label == "local":
            real = reader.realpath(path)
            if real is None:
                return []
            dev = os.stat(real).st_dev
            if os.major(dev):
                names = [n for n in (_devnum_name(os.major(dev), os.minor(dev), reader),) if n]
            path = real
        if not any(names):
            names = _mount_sources(path, reader)
        # whole disks from /sys; where /sys hides them (containers), every name in diskstats
        disks = reader.listdir("/sys/block") or list(parse_diskstats(reader.read("/proc/diskstats") or ""))
        out: list[str] = []
        for name in names:
            for d in _stack(name, disks, reader, depth=0):
                if d not in out:
                    out.append(d)
        return out
    except (OSError, ValueError, IndexError):
        return []


def _devnum_name(major: int, minor: int, reader: ProcReader) -> str | None:
    """Kernel name of block device MAJ:MIN, from /sys or, where /sys hides it, /proc/diskstats."""
    m = re.search(r"^DEVNAME=(\S+)", reader.read(f"/sys/dev/block/{major}:{minor}/uevent") or "", re.MULTILINE)
    if m:
        return m.group(1)
    for line in (reader.read("/proc/diskstats") or "").splitlines():
        parts = line.split()
        if parts[:2] == [str(major), str(minor)]:
            return parts[2]
    return None


def _stack(name: str | None, disks: list[str], reader: ProcReader, depth: int) -> list[str]:
    """`name` as a whole disk, followed by what it is built on (slaves/), recursively."""
    if not name or depth > 8:
        return []
    disk = parent_disk(name, disks) or name
    out = [disk]
    for slave in reader.listdir(f"/sys/block/{disk}/slaves") or []:
        out += _stack(slave, disks, reader, depth + 1)
    return out


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mount_sources(path: str, reader: ProcReader) -> list[str]:
    """Block device names behind the mount holding `path`, by longest mount-point prefix."""
    best: list[str] | None = None
    for line in (reader.read("/proc/self/mountinfo") or "").splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 2:
            continue
        mnt = _unescape(fields[4])
        inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
        if inside and (best is None or len(mnt) >= len(best[0])):  # later mounts shadow earlier ones
            best = [mnt, fields[2], tail[0], _unescape(tail[1])]
    if best is None:
        return []
    _, devnum, fstype, source = best
    major, minor = map(int, devnum.split(":"))
    if major:
        return [n for n in (_devnum_name(major, minor, reader),) if n]
    if not source.startswith("/dev/"):
        return []  # tmpfs, overlay, proc, nfs server:/export ...
    name = os.path.basename(reader.realpath(source) or source)  # /dev/mapper/vg-lv -> dm-N locally only
    if fstype == "btrfs":  # a multi-device btrfs names one member; /sys/fs/btrfs lists them all
        for uuid in reader.listdir("/sys/fs/btrfs") or []:
            members = reader.listdir(f"/sys/fs/btrfs/{uuid}/devices") or []
            if name in members:
                return sorted(members)
    return [name] if reader.read(f"/sys/class/block/{name}/dev") is not None else []


def device_roles(datadir: str, waldir: str | None = None, tablespaces=(), reader: ProcReader = LOCAL) -> dict[str, str]:
    """Which devices hold what: {device: "data" | "wal" | "data,wal" | "tblspc" | ...}.

    `waldir` defaults to datadir/pg_wal, followed if it is a symlink (locally; see RemoteProc).
    Every device in a stack gets the role (dm-0 and the disk under it).
    """
    roles: dict[str, list[str]] = {}
    wal = waldir or os.path.join(datadir, "pg_wal")
    for role, paths in (("data", [datadir]), ("wal", [wal]), ("tblspc", list(tablespaces))):
        for p in paths:
            for dev in devices_for_path(p, reader):
                if role not in roles.setdefault(dev, []):
                    roles[dev].append(role)
    return {dev: ",".join(r) for dev, r in roles.items()}


_DEVICE_FILES = (
    ("rotational", "queue/rotational"),
    ("scheduler", "queue/scheduler"),
    ("nr_requests", "queue/nr_requests"),
    ("read_ahead_kb", "queue/read_ahead_kb"),
    ("model", "device/model"),
    ("dm_name", "dm/name"),
)


def device_settings(dev: str, reader: ProcReader = LOCAL) -> dict[str, str]:
    """A device's queue settings for the recording's settings snapshot; unreadable ones left out.

    `scheduler` is the active one (the bracketed entry of queue/scheduler).
    """
    out: dict[str, str] = {}
    for key, rel in _DEVICE_FILES:
        text = reader.read(f"/sys/block/{dev}/{rel}")
        if text is None:
            continue
        value = text.strip()
        if key == "scheduler":
            m = re.search(r"\[(\S+)\]", value)
            value = m.group(1) if m else value
        out[key] = value
    return out
