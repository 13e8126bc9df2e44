"""What a summary is made of: its statistics (`Stat`), the `Summary` that holds them, and the
window's per-tick columns every group of statistics is computed from.

Apart from the computations so each group (summary.py, summary_latency.py) builds on the same
small base without importing the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.analysis.align import Window, aligned_columns
from pgio_tui.analysis.noise import Estimate, ratio, total_over
from pgio_tui.store.reader import Recording
from pgio_tui.store.stored_rows import Setting

GROUPS = ("latency", "statements", "writes", "checkpoints", "memory", "reads", "wal", "devices", "pgio", "backends")
PERCENTILE_METRICS = {f"p{p}": metric for p, metric in M.LATENCY_P.items()}  # the catalog's percentile set
PERCENTILES = tuple(PERCENTILE_METRICS)
ROLE_LABELS = {"data": "PGDATA", "wal": "WAL", "tblspc": "TBLSPC"}
KB_PER_MIB = 1024
ALL_WRITES = "writes"  # the family every writes.<source> belongs to: its "total" is all sources together
CHECKPOINTS = "checkpoint"  # the family of the checkpoint.* metrics: its statistics are of finished checkpoints


@dataclass(slots=True)
class Stat:
    group: str
    name: str
    unit: str
    value: float | None
    estimate: Estimate | None = None  # None: not judged against noise (percentiles, max, counts)
    metric: str | None = None  # the recorded metric it comes from, for charts
    note: str = ""
    stat: str = ""  # which statistic of `metric` it is: mean, p95, max, total, share …
    of: str = ""  # the catalog key (or family, e.g. "checkpoint") it is a statistic of, where not `metric`
    role: str = ""  # a device's statistic: the role(s) of its device ("PGDATA", "PGDATA+WAL")

    @property
    def key(self) -> tuple[str, str]:
        """The row it is in a comparison: (metric, statistic) as `id`, a device's metric named by its
        role (disk.PGDATA.util_pct) so runs on machines with other device names pair; never display text."""
        if self.role and self.metric:
            return M.disk(self.role, self.metric.rsplit(".", 1)[-1]), self.stat
        return self.id

    @property
    def id(self) -> tuple[str, str]:
        """(metric, statistic): what the statistic is, never its display text (experiments/figures.py)."""
        return self.of or self.metric or self.group, self.stat


@dataclass(slots=True)
class Summary:
    path: Path
    window: Window
    stats: list[Stat]
    settings: dict[str, Setting]
    meta: dict[str, Any]
    role_devices: dict[str, str]  # "PGDATA" -> the device its figures come from
    checkpoint_spans: list[tuple[float, float, str]]  # (x start, x end, kind) inside the window
    pgio: bool  # a pgio workload ran
    setting_events: list[tuple[float, str]] = field(default_factory=list)  # (x, text) of changes inside
    notes: list[str] = field(default_factory=list)

    def get(self, group: str, name: str) -> Stat | None:
        return next((s for s in self.stats if s.group == group and s.name == name), None)

    def value(self, group: str, name: str) -> float | None:
        s = self.get(group, name)
        return None if s is None else s.value

    def find(self, metric: str, stat: str) -> Stat | None:
        """The statistic `stat` of `metric` (a catalog key, or a family such as "checkpoint")."""
        return next((s for s in self.stats if s.id == (metric, stat)), None)


def percent_of(sums: Sequence[float]) -> float | None:
    r = ratio(sums)
    return None if r is None else 100 * r


def total_estimate(per_unit: list[float]) -> Estimate:
    return Estimate((per_unit, [1.0] * len(per_unit)), total_over(len(per_unit)))


def has_values(col: list) -> bool:
    return any(v is not None for v in col)


class Ticks:
    """The window's per-tick values, one list per metric (None where missing)."""

    def __init__(self, rec: Recording, win: Window, metrics: list[str]):
        c = aligned_columns(rec, win, metrics)
        self.x, self.dt, self.n, self.cols = c.x, c.dt, len(c), c.values

    def col(self, metric: str) -> list:
        return self.cols.get(metric) or [None] * self.n

    def has(self, metric: str) -> bool:
        return has_values(self.col(metric))


def add_stat(s: Summary, group: str, name: str, unit: str, value, estimate=None, metric=None, note="",
             stat="", of="", role="") -> None:
    s.stats.append(Stat(group, name, unit, value, estimate, metric, note, stat, of, role))
