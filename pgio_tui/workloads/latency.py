"""Latency statistics of a launched workload: the one place percentiles and threshold counts are made.

Per tick the workloads hand over the latencies of that tick (pgbench transactions from its
per-transaction log, pgio statements from its slices) and get exact figures back; for a whole run,
whose latencies may not fit in memory, a log-bucketed Histogram gives the same figures within 1 %.
Percentiles are pgio_tui.stats' (the one definition); standard deviations are population
ones, as pgbench computes its own.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pgio_tui import metrics as M
from pgio_tui.metrics import LATENCY_PERCENTILES as PERCENTILES
from pgio_tui.metrics import LATENCY_THRESHOLDS_MS as THRESHOLDS_MS  # counted per tick and per run
from pgio_tui.stats import percentile
from pgio_tui.quantiles import LatencyHistogram, buckets_of

__all__ = ["Histogram", "LatencyStats", "buckets_of", "combine", "frame_values", "summarize"]


@dataclass(slots=True)
class LatencyStats:
    """Figures over one set of latencies, in milliseconds."""

    count: int = 0
    mean: float | None = None
    stddev: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None
    over: dict[int, int] = field(default_factory=lambda: dict.fromkeys(THRESHOLDS_MS, 0))

    def as_dict(self, prefix: str = "") -> dict[str, float | int | None]:
        """Flat names for summaries: count, mean_ms, ..., over_100ms, ..."""
        out: dict[str, float | int | None] = {
            f"{prefix}count": self.count, f"{prefix}mean_ms": _r(self.mean), f"{prefix}stddev_ms": _r(self.stddev),
            f"{prefix}p50_ms": _r(self.p50), f"{prefix}p95_ms": _r(self.p95), f"{prefix}p99_ms": _r(self.p99),
            f"{prefix}max_ms": _r(self.max)}
        out.update({f"{prefix}over_{t}ms": n for t, n in self.over.items()})
        return out


def summarize(latencies_ms: Iterable[float]) -> LatencyStats:
    """Exact figures over a (tick's worth of) latencies."""
    values = sorted(latencies_ms)
    n = len(values)
    stats = LatencyStats(count=n)
    if not n:
        return stats
    total = math.fsum(values)
    mean = total / n
    stats.mean = mean
    stats.stddev = math.sqrt(max(0.0, math.fsum((v - mean) ** 2 for v in values) / n))
    stats.p50, stats.p95, stats.p99 = (percentile(values, p) for p in PERCENTILES)
    stats.max = values[-1]
    stats.over = {t: n - _count_at_most(values, t) for t in THRESHOLDS_MS}
    return stats


def _count_at_most(ordered: Sequence[float], limit: float) -> int:
    return bisect.bisect_right(ordered, limit)


def frame_values(stats: LatencyStats, dt: float | None, rate_scale: float = 1.0,
                 failed: int | None = None) -> dict[str, float | int | None]:
    """The `latency.*` metrics of one tick. rate_scale undoes log sampling (1/sampling rate)."""
    values: dict[str, float | int | None] = {
        M.LATENCY_TPS: stats.count * rate_scale / dt if dt else None,
        M.LATENCY_MEAN_MS: stats.mean, M.LATENCY_STDDEV_MS: stats.stddev,
        M.LATENCY_P50_MS: stats.p50, M.LATENCY_P95_MS: stats.p95, M.LATENCY_P99_MS: stats.p99,
        M.LATENCY_MAX_MS: stats.max, M.LATENCY_TXNS: stats.count, M.LATENCY_FAILED: failed,
    }
    values.update({M.LATENCY_OVER[t]: n for t, n in stats.over.items()})
    return values


def combine(parts: Iterable[tuple[float, float, float]]) -> tuple[float, float | None, float | None]:
    """Pool (count, mean, stddev) of several intervals into one (count, mean, stddev).

    For pgbench's progress lines when no per-transaction log is available.
    """
    parts = [(n, m, s) for n, m, s in parts if n > 0]
    total = sum(n for n, _, _ in parts)
    if not total:
        return 0, None, None
    mean = sum(n * m for n, m, _ in parts) / total
    second = sum(n * (s * s + m * m) for n, m, s in parts) / total
    return total, mean, math.sqrt(max(0.0, second - mean * mean))


class Histogram:
    """Whole-run latency figures in bounded memory: the recordings' 1 % log buckets
    (pgio_tui.quantiles) plus exact count, mean, stddev, max and threshold counts."""

    def __init__(self) -> None:
        self.hist = LatencyHistogram()
        self._sum = 0.0
        self._sumsq = 0.0
        self.over = dict.fromkeys(THRESHOLDS_MS, 0)

    @property
    def count(self) -> int:
        return self.hist.count

    @property
    def max(self) -> float | None:
        return self.hist.max_ms

    def add(self, ms: float) -> None:
        self.hist.add(ms)
        self._sum += ms
        self._sumsq += ms * ms
        for t in THRESHOLDS_MS:
            if ms > t:
                self.over[t] += 1

    def percentile(self, pct: float) -> float | None:
        return self.hist.percentile(pct)

    def stats(self) -> LatencyStats:
        if not self.count:
            return LatencyStats()
        mean = self._sum / self.count
        return LatencyStats(
            count=self.count, mean=mean, stddev=math.sqrt(max(0.0, self._sumsq / self.count - mean * mean)),
            p50=self.percentile(50), p95=self.percentile(95), p99=self.percentile(99), max=self.max,
            over=dict(self.over))


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)
