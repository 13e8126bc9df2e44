"""Transaction latency as a Prometheus histogram, from the latency histograms a recording keeps
per tick (1 % wide log buckets, pgio_tui.quantiles), summed into one fixed layout of `le` bounds.

Percentile gauges of one tick cannot be averaged over time or added across hosts; a histogram's
buckets can: `histogram_quantile(0.99, sum by (le) (rate(pgio_transaction_duration_seconds_bucket[5m])))`
is the p99 of every transaction of those five minutes on every server selected. The layout is fixed
(never changed, so series stay comparable) and holds the slow-transaction thresholds (0.1 … 0.5 s)
as bounds: "slower than 0.2 s" is `_count - _bucket{le="0.2"}`.

Each transaction is counted under the bound its 1 % bucket's midpoint falls below, so a
transaction within 0.5 % of a bound may land one bucket over; `_sum` adds the midpoints (within
0.5 % of the exact total). Counts are totals since the first tick with latencies (the exporter's
start, or the recording's), as every counter here.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping

from prometheus_client.utils import floatToGoString

from pgio_tui.quantiles import bucket_value

HistSample = tuple[str, tuple[tuple[str, str], ...], float]  # (name suffix, extra labels, value)

NAME = "transaction_duration_seconds"
HELP = ("Latency of the launched workload's transactions (pgio: statements; pgbench --sampling-rate: a "
        "sample), from the per-tick latency histograms.")
# at most 1.5x apart up to 100 ms (an OLTP p99 is read to within a third), then the slow thresholds
BOUNDS_S = (0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1,
            0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0)
LE = (*(floatToGoString(b) for b in BOUNDS_S), "+Inf")
SUFFIXES = ("_bucket", "_count", "_sum")  # OpenMetrics' order within a point

_slots: dict[int, int] = {}  # log bucket -> index in LE (a few hundred buckets at most in practice)


def slot(bucket: int) -> int:
    """Where a log bucket's transactions are counted: the first bound at or above its midpoint."""
    got = _slots.get(bucket)
    if got is None:
        if len(_slots) > 100_000:  # a recording is untrusted input: keep this bounded
            _slots.clear()
        got = _slots[bucket] = bisect_left(BOUNDS_S, bucket_value(bucket) / 1000.0)
    return got


class Cumulative:
    """The histogram's totals since the first tick that had latencies."""

    def __init__(self):
        self.counts: list[int] | None = None  # per LE slot, not yet cumulative
        self.sum_s = 0.0
        self.count = 0

    def add(self, buckets: Mapping[int, int]) -> None:
        """One tick's sparse log buckets (Frame.latency_buckets)."""
        if not buckets:
            return
        if self.counts is None:
            self.counts = [0] * len(LE)
        for b, n in buckets.items():
            if n > 0:
                self.counts[slot(b)] += n
                self.sum_s += n * bucket_value(b) / 1000.0
                self.count += n

    def samples(self) -> list[HistSample]:
        """(suffix, extra labels, value): the buckets (cumulative, `le`), _count and _sum; none
        before the first tick with latencies."""
        if self.counts is None:
            return []
        out: list[HistSample] = []
        running = 0
        for le, n in zip(LE, self.counts):
            running += n
            out.append(("_bucket", (("le", le),), float(running)))
        out.append(("_count", (), float(self.count)))
        out.append(("_sum", (), self.sum_s))
        return out


def markdown() -> str:
    """The bucket layout as the docs show it."""
    return ", ".join(f"{b * 1000:g} ms" if b < 1 else f"{b:g} s" for b in BOUNDS_S) + ", +Inf"
