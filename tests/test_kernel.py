"""Kernel memory/PSI parsing and sampling, on /proc files captured under load and on the live ones."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from pgio_tui.sources.kernel import KERNEL_KEYS, KernelSource, kernel_settings, parse_meminfo, parse_psi, parse_vmstat, psi_totals
from pgio_tui.sources.procfs import LOCAL, LocalProc, RemoteProc, page_kb

CAPTURE = Path(__file__).parent / "data" / "proc" / "vm-6.18"  # see tests/data/proc/capture.sh


class Snapshot(LocalProc):
    """Serves one captured snapshot K of the capture directory as if it were /proc, like a remote host."""

    label = "snapshot"  # not local: page size is taken as 4 kB, which the capture machine uses

    def __init__(self, k: int):
        self.k = k

    def read(self, path: str) -> str | None:
        name = {"/proc/meminfo": "meminfo", "/proc/vmstat": "vmstat", "/proc/pressure/io": "pressure_io"}.get(path)
        return super().read(str(CAPTURE / f"{name}.{self.k}")) if name else None


def test_parse_meminfo_captured():
    mem = parse_meminfo((CAPTURE / "meminfo.0").read_text())
    assert mem["MemTotal"] == 24684096
    assert mem["Dirty"] == 215092
    assert mem["Writeback"] == 0
    assert mem["MemAvailable"] == 23997508
    assert mem["Cached"] == 1379672
    assert mem["HugePages_Total"] == 0  # a count, no unit


def test_parse_vmstat_captured():
    vm = parse_vmstat((CAPTURE / "vmstat.0").read_text())
    assert vm["nr_dirty_threshold"] == 1201642
    assert vm["nr_dirty_background_threshold"] == 600087
    assert len(vm) > 100


def test_parse_psi_captured():
    psi = parse_psi((CAPTURE / "pressure_io.0").read_text())
    assert psi == {
        "some": {"avg10": 16.84, "avg60": 11.38, "avg300": 3.49, "total": 12822106},
        "full": {"avg10": 6.66, "avg60": 5.29, "avg300": 1.73, "total": 6895440},
    }


def test_kernel_source_on_captured_pair():
    source = KernelSource(Snapshot(0))
    first = source.sample(None)
    assert set(first) == set(KERNEL_KEYS)
    assert first["mem.dirty_kb"] == 215092
    assert first["mem.writeback_kb"] == 0
    assert first["mem.available_kb"] == 23997508
    assert first["mem.cached_kb"] == 1379672
    # vmstat pages x 4 kB, exactly
    assert first["mem.dirty_threshold_kb"] == 1201642 * 4
    assert first["mem.dirty_background_threshold_kb"] == 600087 * 4
    assert first["io.pressure_some_pct"] is None and first["io.pressure_full_pct"] is None

    source.reader = Snapshot(1)
    second = source.sample(1.03)  # uptime.1 - uptime.0 = 408.43 - 407.40
    # by hand: some 13385559 - 12822106 = 563453 µs, full 7176242 - 6895440 = 280802 µs, over 1.03 s
    assert second["io.pressure_some_pct"] == pytest.approx(54.70417, abs=1e-5)
    assert second["io.pressure_full_pct"] == pytest.approx(27.26233, abs=1e-5)


def test_pressure_unknown_without_psi_or_dt():
    class NoPsi(Snapshot):
        def read(self, path):
            return None if path == "/proc/pressure/io" else super().read(path)

    source = KernelSource(NoPsi(0))
    source.sample(None)
    source.reader = NoPsi(1)
    out = source.sample(1.0)
    assert out["io.pressure_some_pct"] is None and out["io.pressure_full_pct"] is None
    assert out["mem.dirty_kb"] == parse_meminfo((CAPTURE / "meminfo.1").read_text())["Dirty"]

    source = KernelSource(Snapshot(0))
    source.sample(None)
    source.reader = Snapshot(1)
    assert source.sample(None)["io.pressure_some_pct"] is None


def _vm_thresholds() -> tuple[int, int]:
    vm = parse_vmstat(Path("/proc/vmstat").read_text())
    return vm["nr_dirty_threshold"], vm["nr_dirty_background_threshold"]


def test_live_thresholds_equal_vmstat_times_page_size():
    page = os.sysconf("SC_PAGE_SIZE") // 1024
    assert page_kb(LOCAL) == page
    source = KernelSource()
    for _ in range(20):  # the kernel recomputes them from free memory at each read: retry until stable
        before = _vm_thresholds()
        out = source.sample(None)
        if _vm_thresholds() == before:
            assert out["mem.dirty_threshold_kb"] == before[0] * page
            assert out["mem.dirty_background_threshold_kb"] == before[1] * page
            break
    else:
        pytest.fail("/proc/vmstat thresholds never stable across one sample")
    assert set(out) == set(KERNEL_KEYS)
    assert all(isinstance(out[k], int) for k in KERNEL_KEYS if k.startswith("mem."))


@pytest.mark.skipif(not os.path.exists("/proc/pressure/io"), reason="kernel without PSI")
def test_live_pressure_is_a_percentage():
    source = KernelSource()
    t0 = time.monotonic()
    source.sample(None)
    time.sleep(0.2)
    out = source.sample(time.monotonic() - t0)
    for kind in ("some", "full"):
        assert 0.0 <= out[f"io.pressure_{kind}_pct"] <= 101.0  # dt is taken just before the second read


def test_live_kernel_settings():
    s = kernel_settings()
    for name in ("dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
                 "dirty_expire_centisecs", "dirty_writeback_centisecs"):
        assert s[f"vm.{name}"] == Path(f"/proc/sys/vm/{name}").read_text().strip()
    assert s["kernel.osrelease"] == os.uname().release
    assert s["cpu.count"] == str(os.cpu_count())
    assert int(s["mem.total_kb"]) * 1024 == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


# --- the same through SQL on the database host -----------------------------------------------

def test_remote_proc_reads_the_server_hosts_files(pg_cluster):
    with pg_cluster.connect() as conn:
        assert RemoteProc.available(conn)
        proc = RemoteProc(conn)
        assert proc.label == "remote" and proc.realpath("/") is None
        assert parse_meminfo(proc.read("/proc/meminfo"))["MemTotal"] == parse_meminfo(LOCAL.read("/proc/meminfo"))["MemTotal"]
        assert sorted(proc.listdir("/sys/block")) == sorted(os.listdir("/sys/block"))
        out = KernelSource(proc).sample(None)
        assert set(out) == set(KERNEL_KEYS) and out["mem.dirty_threshold_kb"] is not None
        assert kernel_settings(proc)["kernel.osrelease"] == os.uname().release


def test_remote_proc_asks_once_for_a_missing_file(pg_cluster):
    missing = f"/proc/pgio-tui-missing-{uuid.uuid4().hex}"
    with pg_cluster.connect() as conn:
        proc = RemoteProc(conn)
        assert proc.read(missing) is None
        assert proc.read(missing) is None
        assert proc.listdir(missing) is None
        assert conn.execute("SELECT 1").fetchone() == (1,)  # the connection is still usable
    time.sleep(0.2)  # let the server flush its log
    assert pg_cluster.log_text().count(missing) == 1  # one ERROR line, not one per tick


def test_remote_proc_unavailable_for_a_plain_role(pg_cluster):
    role = f"pgio_plain_{uuid.uuid4().hex[:8]}"
    with pg_cluster.connect() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        try:
            with pg_cluster.connect(user=role) as conn:
                assert RemoteProc.available(conn) is False
                assert conn.execute("SELECT 1").fetchone() == (1,)
        finally:
            admin.execute(f"DROP ROLE {role}")


def test_vmstat_thresholds_match_the_full_parse():
    """The tick's shortcut finds the same two counters as parse_vmstat, captured and live."""
    from pgio_tui.sources.kernel import vmstat_thresholds
    for text in ((CAPTURE / "vmstat.0").read_text(), Path("/proc/vmstat").read_text()):
        full = parse_vmstat(text)
        want = {k: full[k] for k in ("nr_dirty_threshold", "nr_dirty_background_threshold") if k in full}
        assert want and vmstat_thresholds(text) == want


def test_psi_totals_are_parse_psis():
    """What a tick reads of /proc/pressure/io (the totals) equals the full parse, on every capture."""
    for path in sorted(CAPTURE.glob("pressure_io.*")):
        text = path.read_text()
        full = {k: int(v["total"]) for k, v in parse_psi(text).items() if "total" in v}
        assert psi_totals(text) == full and set(full) == {"some", "full"}, path
    assert psi_totals("") == {} and psi_totals("some avg10=0.00 avg60=0.00 avg300=0.00\n") == {}
