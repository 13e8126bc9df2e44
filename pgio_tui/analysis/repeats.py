"""Statistics across the repeats of an experiment: mean, Student-t 95 % interval, change against a
baseline judged by the baseline's own spread.

Each repeat is one figure of one whole run (its tps, its p99 from all its transactions), so the
repeats are independent samples and a t-interval is the right width for the few of them there are.
The verdict of a change has two tests, both needed for "changed": Welch's interval of B − A must
exclude 0, and |change %| must beat the noise floor — the largest relative distance between two
baseline repeats (A vs A: what the same setting gives twice). docs/experiments.md says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

LEVEL = 0.95
# Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom; above 30, interpolated in
# 1/df towards the normal's 1.95996 (error < 0.1 %).
_T975 = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010, 2.1788,
         2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639,
         2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423)
_Z975 = 1.959964


def t975(df: float) -> float:
    """The 97.5 % quantile of Student's t with `df` (>= 1, may be fractional: Welch) degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    if df >= 30:
        return _Z975 + (_T975[29] - _Z975) * 30 / df
    lo = int(df)
    hi = min(lo + 1, 30)
    return _T975[lo - 1] + (_T975[hi - 1] - _T975[lo - 1]) * (df - lo)


@dataclass(slots=True, frozen=True)
class Interval:
    """Mean of n repeats and the half-width of its 95 % t-interval (None with fewer than 2)."""

    n: int
    mean: float | None
    half: float | None
    sd: float | None

    @property
    def low(self) -> float | None:
        return None if self.mean is None or self.half is None else self.mean - self.half

    @property
    def high(self) -> float | None:
        return None if self.mean is None or self.half is None else self.mean + self.half


def interval(values: Sequence[float | None]) -> Interval:
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    n = len(xs)
    if not n:
        return Interval(0, None, None, None)
    mean = math.fsum(xs) / n
    if n < 2:
        return Interval(1, mean, None, None)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return Interval(n, mean, t975(n - 1) * sd / math.sqrt(n), sd)


def noise_floor_pct(baseline: Sequence[float | None]) -> float | None:
    """A vs A: the largest |a_i / a_j − 1| between two baseline repeats, in %; None below 2 repeats
    or when a repeat is 0."""
    xs = [float(v) for v in baseline if v is not None and math.isfinite(v)]
    if len(xs) < 2 or min(abs(x) for x in xs) == 0:
        return None
    return 100 * max(abs(a / b - 1) for a in xs for b in xs)


@dataclass(slots=True, frozen=True)
class Change:
    pct: float | None  # mean B / mean A − 1, in %
    floor_pct: float | None  # the noise floor it must beat
    verdict: str  # "changed", "within noise", "not judged (...)"


def change(base: Sequence[float | None], other: Sequence[float | None]) -> Change:
    a, b = interval(base), interval(other)
    if a.mean is None or b.mean is None:
        return Change(None, None, "not judged (no figure)")
    if a.mean == 0 and b.mean == 0:
        return Change(0.0, None, "no change (both 0)")
    pct = None if a.mean == 0 else 100 * (b.mean / a.mean - 1)
    floor = noise_floor_pct(base)
    if a.n < 2 or b.n < 2:
        return Change(pct, floor, "not judged (fewer than 2 repeats)")
    if pct is None or floor is None:
        return Change(pct, floor, "not judged (a zero baseline)")
    va, vb = (a.sd or 0.0) ** 2 / a.n, (b.sd or 0.0) ** 2 / b.n
    diff = b.mean - a.mean
    if va + vb == 0:
        excludes_zero = diff != 0
    else:
        df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1)) + (vb ** 2 / (b.n - 1)))
        excludes_zero = abs(diff) > t975(max(1.0, df)) * math.sqrt(va + vb)
    beyond = excludes_zero and abs(pct) > floor
    return Change(pct, floor, "changed" if beyond else "within noise")
