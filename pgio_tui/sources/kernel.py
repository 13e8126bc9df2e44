"""Kernel memory and I/O pressure: Dirty/Writeback against the kernel's own thresholds, and PSI.

The thresholds come from /proc/vmstat `nr_dirty_threshold` / `nr_dirty_background_threshold`, which
the kernel computes at read time with the same code that throttles writers, so they are exact
whether vm.dirty_* are set as ratios or bytes.
"""

from __future__ import annotations

import re

from pgio_tui import metrics as M
from pgio_tui.sources.procfs import LOCAL, PolledSource, ProcReader, page_kb

KERNEL_KEYS = (
    M.MEM_DIRTY_KB,
    M.MEM_WRITEBACK_KB,
    M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB,
    M.MEM_DIRTY_THRESHOLD_KB,
    M.MEM_AVAILABLE_KB,
    M.MEM_CACHED_KB,
    M.IO_PRESSURE_SOME_PCT,
    M.IO_PRESSURE_FULL_PCT,
)
PRESSURE = {"some": M.IO_PRESSURE_SOME_PCT, "full": M.IO_PRESSURE_FULL_PCT}  # /proc/pressure/io lines


def parse_meminfo(text: str) -> dict[str, int]:
    """`/proc/meminfo` as {field: value}; values in kB (HugePages_* are counts, as the file says)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0])
    return out


# Anchored on "\n" (the text is searched with one put in front), not on ^ under re.M: a multiline
# ^ is tried at every character, "\n" is found by a fast scan (6 against 38 µs for meminfo).
_MEM_TICK = re.compile(r"\n(Dirty|Writeback|MemAvailable|Cached):[ \t]*(\d+)(?!\S)")


def meminfo_tick(text: str) -> dict[str, int]:
    """The four `/proc/meminfo` fields a tick needs (as parse_meminfo gives them), found without
    splitting its ~55 lines."""
    return {k: int(v) for k, v in _MEM_TICK.findall("\n" + text)}


_VM_THRESHOLDS = re.compile(r"\n(nr_dirty_threshold|nr_dirty_background_threshold) (-?\d+)(?=\n|\Z)")


def vmstat_thresholds(text: str) -> dict[str, int]:
    """The two counters of `/proc/vmstat` a tick needs, found without splitting its ~170 lines."""
    return {k: int(v) for k, v in _VM_THRESHOLDS.findall("\n" + text)}


def parse_vmstat(text: str) -> dict[str, int]:
    """`/proc/vmstat` as {counter: value}; nr_* are pages, the rest event counts."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


_PSI_FIELD = re.compile(r"(\w+)=([\d.]+)")


def parse_psi(text: str) -> dict[str, dict[str, float | int]]:
    """`/proc/pressure/io` as {"some"|"full": {"avg10", "avg60", "avg300": %, "total": µs}}."""
    out: dict[str, dict[str, float | int]] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind in ("some", "full"):
            out[kind] = {k: int(v) if k == "total" else float(v) for k, v in _PSI_FIELD.findall(rest)}
    return out


_PSI_TOTAL = re.compile(r"\n(some|full) [^\n]*\btotal=(\d+)")


def psi_totals(text: str) -> dict[str, int]:
    """The `total` (µs) of each line of `/proc/pressure/io`, as parse_psi gives it, without
    parsing the averages a tick does not use."""
    return {k: int(v) for k, v in _PSI_TOTAL.findall("\n" + text)}


class KernelSource(PolledSource):
    """Samples the memory and pressure metrics once per tick.

    `sample(dt)` takes the tick duration from the caller (the sampler's clock) so every source of a
    tick divides by the same dt. It keeps the previous PSI totals itself; pressure is None on the
    first sample, when dt is unknown, and when /proc/pressure/io is absent (kernel < 4.20, psi=0).
    """

    def __init__(self, reader: ProcReader = LOCAL):
        self.reader = reader
        self.page_kb = page_kb(reader)
        self._psi_prev: dict[str, int] | None = None

    def sample(self, dt: float | None) -> dict[str, float | None]:
        mem = meminfo_tick(self._read("/proc/meminfo") or "")
        vm = vmstat_thresholds(self._read("/proc/vmstat") or "")
        out: dict[str, float | None] = {
            M.MEM_DIRTY_KB: mem.get("Dirty"),
            M.MEM_WRITEBACK_KB: mem.get("Writeback"),
            M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB: self._pages_kb(vm.get("nr_dirty_background_threshold")),
            M.MEM_DIRTY_THRESHOLD_KB: self._pages_kb(vm.get("nr_dirty_threshold")),
            M.MEM_AVAILABLE_KB: mem.get("MemAvailable"),
            M.MEM_CACHED_KB: mem.get("Cached"),
        }
        out.update(self._pressure(dt))
        return out

    def _pages_kb(self, pages: int | None) -> int | None:
        return None if pages is None else pages * self.page_kb

    def _pressure(self, dt: float | None) -> dict[str, float | None]:
        totals = psi_totals(self._read("/proc/pressure/io") or "")
        prev, self._psi_prev = self._psi_prev, totals
        out: dict[str, float | None] = {}
        for kind in ("some", "full"):
            cur, old = totals.get(kind), (prev or {}).get(kind)
            if cur is not None and old is not None and cur >= old and dt is not None and dt > 0:
                out[PRESSURE[kind]] = 100.0 * (cur - old) / (dt * 1e6)
            else:
                out[PRESSURE[kind]] = None
        return out


CPU_COUNT, MEM_TOTAL_KB = "cpu.count", "mem.total_kb"  # machine facts among the kernel settings
_SYSCTLS = (
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "kernel.osrelease",
)


def kernel_settings(reader: ProcReader = LOCAL) -> dict[str, str]:
    """The kernel facts a recording keeps beside its ticks: vm.dirty_* sysctls, RAM, CPUs, release.

    Keys are sysctl names where there is one, else `mem.total_kb` and `cpu.count`; unreadable
    entries are left out.
    """
    out: dict[str, str] = {}
    for name in _SYSCTLS:
        text = reader.read("/proc/sys/" + name.replace(".", "/"))
        if text is not None:
            out[name] = text.strip()
    total = parse_meminfo(reader.read("/proc/meminfo") or "").get("MemTotal")
    if total is not None:
        out[MEM_TOTAL_KB] = str(total)
    cpuinfo = reader.read("/proc/cpuinfo")
    if cpuinfo is not None:
        out[CPU_COUNT] = str(len(re.findall(r"^processor\s*:", cpuinfo, re.MULTILINE)))
    return out
