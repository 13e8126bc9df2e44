"""The run's latency distribution: from its transactions when the recording has per-tick latency
histograms (`latency_hist`, merged over the window: exact within the buckets' 0.5 %), else
estimated from what each tick recorded.

An older recording keeps per-tick quantiles (p50, p95, p99, max from pgbench's per-transaction log), not
every transaction. Each tick's distribution is taken as piecewise linear through those knots (and
from 0 at 0 ms to its p50), and the run's CDF is the mixture of the ticks weighted by their
transactions: exact at every tick's knots, an estimate between them. Where only a per-tick mean
exists (pg_stat_statements), the curve is the distribution of the per-tick means instead, and
says so.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from pgio_tui import metrics as M

QUANTILE_METRICS = ((M.LATENCY_P50_MS, 0.5), (M.LATENCY_P95_MS, 0.95), (M.LATENCY_P99_MS, 0.99),
                    (M.LATENCY_MAX_MS, 1.0))
POINTS = 160


def _tick_cdf(knots: list[tuple[float, float]], x: float) -> float:
    """F(x) of one tick: linear through (0, 0) and its (value, quantile) knots."""
    prev_v, prev_q = 0.0, 0.0
    for v, q in knots:
        if x < v:
            return prev_q + (q - prev_q) * (x - prev_v) / (v - prev_v) if v > prev_v else prev_q
        prev_v, prev_q = v, q
    return 1.0


def mixture(ticks: Sequence[tuple[float, list[tuple[float, float]]]], x_max: float,
            points: int = POINTS) -> list[tuple[float, float]]:
    """(x, F(x)) on `points` steps up to x_max for ticks given as (weight, knots)."""
    total = sum(w for w, _ in ticks)
    if not total:
        return []
    xs = [x_max * i / (points - 1) for i in range(points)]
    acc = [0.0] * points
    for w, knots in ticks:
        if not w:
            continue
        top = knots[-1][0]
        end = bisect_right(xs, top)  # from here on F = 1
        for i in range(end):
            acc[i] += w * _tick_cdf(knots, xs[i])
        for i in range(end, points):
            acc[i] += w
    return [(x, a / total) for x, a in zip(xs, acc)]


@dataclass(slots=True)
class Distribution:
    """One run's latency distribution: `ticks` as (weight, knots) when quantiles exist, else
    `means` as (weight, per-tick mean)."""

    what: str
    ticks: list[tuple[float, list[tuple[float, float]]]]
    means: list[tuple[float, float]]
    points: list[tuple[float, float]] | None = None  # (ms, share at or below) from transactions
    p99: float | None = None

    def top(self) -> float:
        """Where a chart of it should end: a little past the 99th percentile (of the transactions,
        else of the per-tick p99; the tail beyond is off the chart), or past the largest mean."""
        if self.points:
            return (self.p99 or self.points[-1][0]) * 1.2 or 1.0
        if self.ticks:
            p99 = sorted(k[-2][0] for _, k in self.ticks)
            return p99[int(0.99 * (len(p99) - 1))] * 1.2 or 1.0
        return max((v for _, v in self.means), default=1.0) * 1.05 or 1.0

    def curve(self, x_max: float) -> list[tuple[float, float]]:
        if self.points:
            pts = [(0.0, 0.0)] + [p for p in self.points if p[0] <= x_max]
            beyond = next((p for p in self.points if p[0] > x_max), None)
            if beyond is not None:  # the curve reaches the chart's edge at its height there
                pts.append((x_max, pts[-1][1]))
            return pts
        if self.ticks:
            return mixture(self.ticks, x_max)
        total = sum(w for w, _ in self.means)
        acc, pts = 0.0, [(0.0, 0.0)]
        for w, v in self.means:
            acc += w
            pts.append((v, acc / total))
        return [p for p in pts if p[0] <= x_max]


def from_histogram(hist) -> Distribution | None:
    """The transactions' own distribution (a quantiles.LatencyHistogram); None when empty."""
    if not hist.count:
        return None
    return Distribution("transactions", [], [], hist.cdf(), hist.percentile(99))


def distribution(columns: dict[str, list], weights: list[float]) -> Distribution | None:
    """The transaction mixture when per-tick quantiles exist, else the per-tick means; None when
    the run recorded no latency."""
    qcols = [(columns.get(m) or [], q) for m, q in QUANTILE_METRICS]
    ticks = []
    for i, w in enumerate(weights):
        knots: list[tuple[float, float]] = []
        for col, q in qcols:
            v = col[i] if i < len(col) else None
            if v is not None and (not knots or v >= knots[-1][0]):
                knots.append((float(v), q))
        if w and len(knots) >= 2 and knots[-1][1] == 1.0:
            ticks.append((w, knots))
    if ticks:
        return Distribution("transactions (from per-tick quantiles)", ticks, [])
    means = sorted(((w, float(v)) for w, v in zip(weights, columns.get(M.LATENCY_MEAN_MS) or [])
                    if v is not None and w), key=lambda p: p[1])
    return Distribution("per-tick mean latency", [], means) if means else None
