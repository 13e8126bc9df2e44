"""What a pgio run is asked to do: pgio.conf's settings, their limits and the SCALE syntax.

Apart from the workload so the CLI and the launcher can parse and check a configuration without
loading the session machinery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.launch import PGIO_DEFAULTS

BLOCK = 8192
MIN_BLOCKS = 1024  # pgio refuses smaller tables (8 MB)
SLICE_S = 0.25  # seconds per server-side call: the longest a stop or a statistics update waits


def parse_scale(text: str | int) -> int:
    """pgio's SCALE: a block count, or a size with M, G or T (MiB, GiB, TiB); at least 1024 blocks."""
    m = re.fullmatch(r"\s*(\d+)\s*([MGTmgt]?)\s*", str(text))
    if not m:
        raise WorkloadError(f"--scale {text!r}: give blocks (e.g. 8192) or a size like 64M, 1G")
    n, unit = int(m.group(1)), m.group(2).upper()
    blocks = n * {"": 1, "M": 2**20 // BLOCK, "G": 2**30 // BLOCK, "T": 2**40 // BLOCK}[unit]
    if blocks < MIN_BLOCKS:
        raise WorkloadError(f"--scale {text} is {blocks} blocks: pgio needs at least {MIN_BLOCKS} (8M)")
    return blocks


@dataclass(slots=True)
class PgioConfig:
    """pgio.conf, by its original meanings (pgio.md §2)."""

    schemas: int = PGIO_DEFAULTS["schemas"]  # NUM_SCHEMAS: tables pgio1..pgioN
    scale: int = parse_scale(PGIO_DEFAULTS["scale"])  # SCALE in blocks per table
    sessions: int = PGIO_DEFAULTS["sessions"]  # NUM_THREADS: sessions per table
    run_time: float = float(PGIO_DEFAULTS["run_time"])  # RUN_TIME, seconds
    update_pct: int = PGIO_DEFAULTS["update_pct"]  # UPDATE_PCT: 0, 1-50 or 100
    work_unit: int = PGIO_DEFAULTS["work_unit"]  # WORK_UNIT
    update_work_unit: int = PGIO_DEFAULTS["update_work_unit"]  # UPDATE_WORK_UNIT
    setup: bool = PGIO_DEFAULTS["setup"]  # build the tables first
    slice_s: float = SLICE_S

    def check(self) -> None:
        if self.schemas < 1 or self.sessions < 1:
            raise WorkloadError("--schemas and --sessions must be 1 or more")
        if not (self.update_pct in (0, 100) or 1 <= self.update_pct <= 50):
            raise WorkloadError(f"--update-pct {self.update_pct}: pgio allows 0, 1-50 or 100")
        if not 1 <= self.work_unit < self.scale - 1 or not 1 <= self.update_work_unit < self.scale - 1:
            raise WorkloadError("--work-unit and --update-work-unit must be at least 1 and below the scale")
        if self.run_time <= 0:
            raise WorkloadError("--run-time must be greater than 0")

