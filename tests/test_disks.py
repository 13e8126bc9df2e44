"""diskstats -> iostat -x figures, checked against sysstat's iostat on the same captured snapshots,
and directories -> devices on this machine's real mounts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pgio_tui.frame import DEVICE_FIELDS
from pgio_tui.sources.disks import (
    DiskCounters,
    DiskSource,
    default_devices,
    device_roles,
    device_settings,
    devices_for_path,
    iostat,
    parent_disk,
    parse_diskstats,
)
from pgio_tui.sources.procfs import LocalProc, RemoteProc

DATA = Path(__file__).parent / "data" / "proc"
PAIRS = sorted(
    (cap.name, *map(int, f.name.split(".")[1].split("-")))
    for cap in DATA.iterdir() if cap.is_dir()
    for f in cap.glob("iostat.*.json")
)
# our field -> iostat -x -o JSON column
IOSTAT_COLUMNS = {"r_s": "r/s", "w_s": "w/s", "rkb_s": "rkB/s", "wkb_s": "wkB/s", "r_await_ms": "r_await",
                  "w_await_ms": "w_await", "aqu_sz": "aqu-sz", "util_pct": "util", "f_s": "f/s",
                  "f_await_ms": "f_await"}
PRINTED = 0.005 + 1e-9  # iostat prints 2 decimals


def _uptime_cs(path: Path) -> int:
    """/proc/uptime's first field in centiseconds, the unit iostat's interval is measured in."""
    sec, cent = path.read_text().split()[0].split(".")
    return int(sec) * 100 + int(cent)


def _capture(cap: str, k: int) -> tuple[dict[str, DiskCounters], int]:
    return parse_diskstats((DATA / cap / f"diskstats.{k}").read_text()), _uptime_cs(DATA / cap / f"uptime.{k}")


def _iostat_reports(cap: str, k: int, l: int) -> list[list[dict]]:
    doc = json.loads((DATA / cap / f"iostat.{k}-{l}.json").read_text())
    return [report["disk"] for report in doc["sysstat"]["hosts"][0]["statistics"]]


def _assert_as_printed(ours: dict, row: dict) -> None:
    for field, column in IOSTAT_COLUMNS.items():
        assert abs(ours[field] - row[column]) <= PRINTED, (row["disk_device"], field, ours[field], row[column])


def test_captures_exist():
    assert len(PAIRS) >= 3


@pytest.mark.parametrize("cap,k,l", PAIRS)
def test_iostat_matches_sysstat_interval_report(cap, k, l):
    (a, up_a), (b, up_b) = _capture(cap, k), _capture(cap, l)
    rows = _iostat_reports(cap, k, l)[1]
    assert rows, "iostat reported no device"
    for row in rows:
        dev = row["disk_device"]
        _assert_as_printed(iostat(a[dev], b[dev], (up_b - up_a) / 100), row)


@pytest.mark.parametrize("cap,k,l", PAIRS)
def test_iostat_matches_sysstat_since_boot_report(cap, k, l):
    a, up_a = _capture(cap, k)
    zero = DiskCounters(*[0] * 11)
    for row in _iostat_reports(cap, k, l)[0]:
        _assert_as_printed(iostat(zero, a[row["disk_device"]], up_a / 100), row)


def test_parse_diskstats_captured():
    stats = parse_diskstats((DATA / "vm-6.18" / "diskstats.0").read_text())  # 20-column lines (kernel 6.18)
    assert list(stats)[:2] == ["loop0", "loop1"] and "vda" in stats and "zram0" in stats
    assert stats["vda"] == DiskCounters(160664, 9429, 6067842, 25871, 403874, 15252, 24530408, 115177, 0, 21272,
                                        151611, 5590, 20, 17545216, 6289, 139444, 4272)


def test_parse_diskstats_older_kernels_14_and_18_columns():
    line = next(x for x in (DATA / "vm-6.18" / "diskstats.0").read_text().splitlines() if " vda " in x)
    cols = line.split()
    full = parse_diskstats(line)["vda"]
    for ncols, nfields in ((14, 11), (18, 15)):
        old = parse_diskstats(" ".join(cols[:ncols]))["vda"]
        assert old[:nfields] == full[:nfields]
        assert all(v == 0 for v in old[nfields:])
    assert parse_diskstats("   8       1 sda1 4 8 16 32\n") == {}  # pre-2.6.25 partition line


def _counters(**kw) -> DiskCounters:
    return DiskCounters(*[0] * 11)._replace(**kw)


def test_iostat_32bit_wrap_by_hand():
    top = 2**32
    prev = _counters(rd_ios=1000, rd_sectors=8000, rd_ticks=top - 30, wr_ios=500, wr_sectors=4000,
                     wr_ticks=top - 10, io_ticks=top - 300, time_in_queue=top - 1500, fl_ios=40, fl_ticks=top - 6)
    cur = _counters(rd_ios=1100, rd_sectors=8800, rd_ticks=170, wr_ios=550, wr_sectors=5000,
                    wr_ticks=90, io_ticks=200, time_in_queue=500, fl_ios=60, fl_ticks=14)
    # over 2 s: 100 reads, 50 writes, 20 flushes, 400 kB read, 500 kB written; rd 200 ms, wr 100 ms,
    # flush 20 ms, busy 500 ms, weighted 2000 ms
    assert iostat(prev, cur, 2.0) == {
        "r_s": 50.0, "w_s": 25.0, "rkb_s": 200.0, "wkb_s": 250.0,
        "r_await_ms": 2.0, "w_await_ms": 2.0, "aqu_sz": 1.0, "util_pct": 25.0, "f_s": 10.0, "f_await_ms": 1.0,
    }


def test_iostat_idle_device_has_zero_await():
    c = _counters(rd_ios=7, wr_ios=9, rd_ticks=40, wr_ticks=50)
    assert iostat(c, c, 1.0) == dict.fromkeys(DEVICE_FIELDS, 0.0)


def test_iostat_unknown_tick():
    prev = _counters(rd_ios=1000, wr_ios=10)
    assert iostat(prev, _counters(rd_ios=3, wr_ios=12), 1.0) == dict.fromkeys(DEVICE_FIELDS)  # re-created
    assert iostat(prev, prev, None) == dict.fromkeys(DEVICE_FIELDS)
    assert iostat(prev, prev, 0.0) == dict.fromkeys(DEVICE_FIELDS)


@pytest.mark.parametrize("name,parent", [
    ("sda1", "sda"), ("sdaa3", "sdaa"), ("sdp1", "sdp"), ("nvme0n1p1", "nvme0n1"), ("mmcblk0p2", "mmcblk0"),
    ("md127p1", "md127"), ("loop0p1", "loop0"),
    ("sda", None), ("sdaa", None), ("md127", None), ("dm-10", None), ("nvme0n1", None),
])
def test_parent_disk_kernel_naming(name, parent):
    names = ["sda", "sdaa", "sdaa3", "sdp", "nvme0n1", "mmcblk0", "md12", "md127", "dm-1", "dm-10", "loop0", name]
    assert parent_disk(name, names) == parent


def test_default_devices_captured():
    # loop0-7 and zram0 are there, idle; vda has no partitions on this VM
    assert default_devices(parse_diskstats((DATA / "vm-6.18" / "diskstats.0").read_text())) == ["vda"]


def test_default_devices_skips_partitions_pseudo_and_idle():
    busy, idle = _counters(rd_ios=5), _counters()
    stats = {"sda": busy, "sda1": busy, "nvme0n1": busy, "nvme0n1p2": busy, "dm-0": busy, "md0": busy,
             "loop3": busy, "zram0": busy, "sr0": busy, "sdb": idle}
    assert default_devices(stats) == ["sda", "nvme0n1", "dm-0", "md0"]


def test_disk_source_live():
    source = DiskSource()
    first = source.sample(None)
    assert first and all(row == dict.fromkeys(DEVICE_FIELDS) for row in first.values())
    t0 = time.monotonic()
    with open("/proc/self/mountinfo") as f:
        f.read()
    time.sleep(0.1)
    second = source.sample(time.monotonic() - t0)
    assert second.keys() == first.keys()
    for row in second.values():
        assert list(row) == list(DEVICE_FIELDS) and all(isinstance(v, float) and v >= 0 for v in row.values())


def test_disk_source_named_devices():
    source = DiskSource(devices=["no-such-disk"])
    source.sample(None)
    assert source.sample(1.0) == {"no-such-disk": dict.fromkeys(DEVICE_FIELDS)}


# --- directories to devices -------------------------------------------------------------------

def _findmnt(path: str, column: str) -> str:
    """A column of the mount holding `path` (the top one when mounts are stacked)."""
    out = subprocess.run(["findmnt", "-n", "-o", column, "-T", path], capture_output=True, text=True).stdout
    return (out.splitlines() or [""])[-1].strip()


SHM_IS_TMPFS = bool(shutil.which("findmnt")) and _findmnt("/dev/shm", "FSTYPE") == "tmpfs"


def _lsblk_disk(source: str) -> str | None:
    """The kernel name of the disk holding `source` per lsblk: the device itself, or a partition's parent."""
    r = subprocess.run(["lsblk", "-n", "-d", "-o", "KNAME,TYPE,PKNAME", source], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.split():
        return None
    kname, typ, *pk = r.stdout.split()
    return pk[0] if typ == "part" and pk else kname


@pytest.mark.skipif(not shutil.which("findmnt") or not shutil.which("lsblk"), reason="needs util-linux")
def test_devices_for_root_match_lsblk():
    source = _findmnt("/", "SOURCE")
    disk = _lsblk_disk(source) if source.startswith("/dev/") else None
    if disk is None:
        pytest.skip(f"/ is not on a block device here ({source!r})")
    assert devices_for_path("/")[0] == disk


class NoStat(LocalProc):
    """This host's files, read the way RemoteProc has to: no realpath, hence no stat()."""

    label = "remote"

    def realpath(self, path):
        return None


class NoSys(LocalProc):
    """This host's files with /sys hidden, as in many containers."""

    def read(self, path):
        return None if path.startswith("/sys/") else super().read(path)

    def listdir(self, path):
        return None if path.startswith("/sys/") else super().listdir(path)


def test_devices_for_path_through_mountinfo_as_remote():
    assert devices_for_path("/", NoStat()) == devices_for_path("/")
    assert devices_for_path("/", NoStat())


def test_devices_for_path_without_sys():
    assert devices_for_path("/", NoSys())[:1] == devices_for_path("/")[:1]


def test_devices_and_diskstats_through_sql(pg_cluster):
    with pg_cluster.connect() as conn:
        datadir = conn.execute("SHOW data_directory").fetchone()[0]
        proc = RemoteProc(conn)
        assert devices_for_path(datadir, proc) == devices_for_path(datadir)
        assert device_roles(datadir, reader=proc) == device_roles(datadir)
        source = DiskSource(proc)
        source.sample(None)
        rows = source.sample(0.05)
        assert rows.keys() == DiskSource().sample(None).keys()
        assert all(v is not None for row in rows.values() for v in row.values())


@pytest.mark.skipif(not SHM_IS_TMPFS, reason="no tmpfs on /dev/shm")
def test_devices_for_tmpfs_path_is_empty(tmp_path):
    assert devices_for_path("/dev/shm") == []
    assert devices_for_path("/dev/shm", NoStat()) == []
    assert devices_for_path("/proc") == []
    assert devices_for_path(str(tmp_path / "does-not-exist")) == []


def test_device_roles_with_symlinked_wal(tmp_path):
    disk = devices_for_path(str(tmp_path))
    if not disk or not SHM_IS_TMPFS:
        pytest.skip("needs a temp dir on a block device and a tmpfs")
    shm = Path("/dev/shm") / f"pgio-test-{os.getpid()}"
    shm.mkdir()
    try:
        data = tmp_path / "data"
        (data / "tblspc").mkdir(parents=True)
        (data / "pg_wal").symlink_to(shm)  # WAL on tmpfs: no device
        assert device_roles(str(data)) == {d: "data" for d in disk}

        (shm / "data").mkdir()
        (shm / "data" / "pg_wal").symlink_to(tmp_path / "data")  # data on tmpfs, WAL on the disk
        assert device_roles(str(shm / "data")) == {d: "wal" for d in disk}

        (tmp_path / "data2" / "pg_wal").mkdir(parents=True)
        assert device_roles(str(tmp_path / "data2"), tablespaces=[str(data / "tblspc")]) == {
            d: "data,wal,tblspc" for d in disk}
        assert device_roles(str(shm / "data"), waldir=str(shm)) == {}
    finally:
        shutil.rmtree(shm)


def test_device_settings_live():
    dev = devices_for_path("/")
    if not dev:
        pytest.skip("/ is not on a block device")
    s = device_settings(dev[0])
    assert s["rotational"] in ("0", "1")
    assert s["nr_requests"].isdigit()
    sched = Path(f"/sys/block/{dev[0]}/queue/scheduler").read_text().split()
    assert f"[{s['scheduler']}]" in sched or sched == [s["scheduler"]]
    assert device_settings("no-such-disk") == {}


def _mbr_with_one_partition(path: Path, size_mb: int) -> None:
    """A disk image whose MBR holds one Linux partition from sector 2048 to the end."""
    sectors = size_mb * 2048
    entry = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + (sectors - 2048).to_bytes(4, "little")
    mbr = bytearray(512)
    mbr[446:462] = entry
    mbr[510:512] = b"\x55\xaa"
    with open(path, "wb") as f:
        f.write(mbr)
        f.truncate(sectors * 512)


def _run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def loop_devices(tmp_path):
    """attach(image) -> /dev/loopN (partitions scanned); detached and unmounted after the test."""
    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("needs root and losetup")
    attached: list[str] = []
    mounts: list[Path] = []

    def attach(img: Path) -> str:
        attached.append(_run("losetup", "-f", "-P", "--show", str(img)))
        return attached[-1]

    def mount(dev: str, where: Path) -> None:
        where.mkdir()
        _run("mount", dev, str(where))
        mounts.append(where)

    attach.mount = mount
    yield attach
    for m in reversed(mounts):
        subprocess.run(["umount", str(m)], check=True)
    for dev in attached:
        subprocess.run(["losetup", "-d", dev], check=True)


@pytest.mark.skipif(not shutil.which("mkfs.ext4"), reason="needs mkfs.ext4")
def test_partition_maps_to_its_disk(tmp_path, loop_devices):
    img = tmp_path / "disk.img"
    _mbr_with_one_partition(img, 16)
    loop = loop_devices(img)
    name = os.path.basename(loop)
    for _ in range(20):
        if os.path.exists(f"/sys/block/{name}/{name}p1"):
            break
        time.sleep(0.1)
    else:
        pytest.skip("the kernel made no partition (built without CONFIG_MSDOS_PARTITION?)")
    _run("mkfs.ext4", "-q", f"{loop}p1")
    loop_devices.mount(f"{loop}p1", tmp_path / "mnt")
    assert devices_for_path(str(tmp_path / "mnt")) == [name]
    assert devices_for_path(str(tmp_path / "mnt"), NoStat()) == [name]


@pytest.mark.skipif(not shutil.which("mkfs.btrfs") or "btrfs" not in Path("/proc/filesystems").read_text(),
                    reason="needs btrfs and mkfs.btrfs")
def test_multi_device_btrfs_maps_to_all_members(tmp_path, loop_devices):
    """st_dev of a btrfs is anonymous (major 0): mountinfo names one member, /sys/fs/btrfs all of them."""
    loops = []
    for i in range(2):
        (tmp_path / f"m{i}.img").write_bytes(b"")
        os.truncate(tmp_path / f"m{i}.img", 200 * 2**20)
        loops.append(loop_devices(tmp_path / f"m{i}.img"))
    _run("mkfs.btrfs", "-q", "-d", "raid0", "-m", "raid1", *loops)
    mnt = tmp_path / "mnt"
    loop_devices.mount(loops[0], mnt)
    assert os.major(os.stat(mnt).st_dev) == 0
    names = sorted(os.path.basename(x) for x in loops)
    assert devices_for_path(str(mnt)) == names
    assert devices_for_path(str(mnt), NoStat()) == names
    (mnt / "pg_wal").mkdir()
    data_disks = devices_for_path(str(tmp_path))
    assert device_roles(str(tmp_path), waldir=str(mnt / "pg_wal")) == {
        **{d: "data" for d in data_disks}, **{n: "wal" for n in names}}
