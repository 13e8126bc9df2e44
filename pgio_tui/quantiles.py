"""The latency histogram recordings keep per tick, and percentiles read from it.

Percentiles follow the one definition (pgio_tui.stats: linear between the closest ranks), applied
to the bucket values, so a whole run's percentile merged from per-tick histograms is the one the
transactions themselves would give, within the bucket width.

The histogram has log buckets 1 % wide: bucket i holds [FLOOR * RATIO**i, FLOOR * RATIO**(i+1)) ms,
and a value is taken as its bucket's geometric midpoint, so any percentile read from it is within
0.5 % of the exact one. Buckets are sparse (only those with a count are kept) and add up across
ticks, so a window's distribution is the sum of its ticks' buckets. FLOOR and RATIO are part of the
recording format (table `latency_hist`): never change them without a schema version.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

FLOOR_MS = 0.001  # bucket 0 holds everything below 1 µs * RATIO
RATIO = 1.01
_LOG_RATIO = math.log(RATIO)
MAX_MS = 1e9  # 11.6 days: a longer latency is counted in the top bucket
MAX_BUCKET = int(math.log(MAX_MS / FLOOR_MS) / _LOG_RATIO)  # 2,776; a recording's other buckets are damage
MAX_COUNT = 10 ** 12  # latencies in one bucket of one tick; more is damage (sums stay exact in SQLite)


def bucket_of(ms: float) -> int:
    """The histogram bucket of a latency in milliseconds."""
    if ms >= MAX_MS:
        return MAX_BUCKET
    return int(math.log(ms / FLOOR_MS) / _LOG_RATIO) if ms > FLOOR_MS else 0


def bucket_value(i: int) -> float:
    """The value a bucket stands for: its geometric midpoint (≤ 0.5 % from anything in it)."""
    return FLOOR_MS * RATIO ** (i + 0.5)


def buckets_of(values_ms: Iterable[float]) -> dict[int, int]:
    """Sparse bucket counts of some latencies (one tick's worth)."""
    out: dict[int, int] = {}
    for v in values_ms:
        i = bucket_of(v)
        out[i] = out.get(i, 0) + 1
    return out


class LatencyHistogram:
    """Sparse bucket counts; merged by adding. Percentiles use `percentile`'s rank rule on the
    bucket values, clamped to the largest value seen when it is known."""

    def __init__(self, buckets: Mapping[int, int] | None = None, max_ms: float | None = None):
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.max_ms = max_ms
        if buckets:
            self.merge(buckets)

    def add(self, ms: float) -> None:
        i = bucket_of(ms)
        self.buckets[i] = self.buckets.get(i, 0) + 1
        self.count += 1
        if self.max_ms is None or ms > self.max_ms:
            self.max_ms = ms

    def merge(self, buckets: Mapping[int, int]) -> None:
        for i, n in buckets.items():
            if n:
                self.buckets[i] = self.buckets.get(i, 0) + n
                self.count += n

    def _value(self, i: int) -> float:
        v = bucket_value(i)
        return min(v, self.max_ms) if self.max_ms is not None else v

    def percentile(self, pct: float) -> float | None:
        if not self.count:
            return None
        pos = (self.count - 1) * pct / 100.0
        lo = math.floor(pos)
        hi = min(lo + 1, self.count - 1)
        a = b = None
        seen = 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            if a is None and lo < seen:
                a = self._value(i)
            if hi < seen:
                b = self._value(i)
                break
        assert a is not None and b is not None, "lo <= hi < count: both ranks fall in a bucket"
        return a + (b - a) * (pos - lo)

    def mean(self) -> float | None:
        """Mean of the bucket values (within 0.5 %; a workload's own exact mean is better)."""
        if not self.count:
            return None
        return math.fsum(self._value(i) * n for i, n in self.buckets.items()) / self.count

    def cdf(self) -> list[tuple[float, float]]:
        """(value ms, fraction of transactions at or below it), one point per bucket, ascending."""
        out, seen = [], 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            out.append((self._value(i), seen / self.count))
        return out
