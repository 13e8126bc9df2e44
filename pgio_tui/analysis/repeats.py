"""Statistics across the repeats of an experiment: mean, Student-t 95 % interval kept inside the
figure's domain, change against a baseline judged by the baseline's own spread, and the smallest
change the repeats could have told from noise.

Each repeat is one figure of one whole run (its tps, its p99 from all its transactions), so the
repeats are independent samples and a t-interval is the right width for the few of them there are.
The verdict of a change has two tests, both needed for "changed": Welch's interval of B − A must
exclude 0, and |B − A| must beat the noise floor — the range of the baseline's repeats (A vs A:
what the same setting gives twice). A figure that cannot be negative, every repeat above 0, is
judged as a ratio (on logarithms: a fall to 1 % is as plain as a rise to 100×; its floor is the
largest ratio of two baseline repeats); any other on amounts, its floor in % of the baseline's
mean, so a baseline repeat near zero does not blow it up. docs/experiments.md says why.
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


Domain = tuple[float | None, float | None]  # the values a figure can take: (lowest, highest), None: unbounded
ANY: Domain = (None, None)
NON_NEGATIVE: Domain = (0.0, None)  # counts, rates, durations, levels
PERCENT: Domain = (0.0, 100.0)  # a share or a ratio in %


@dataclass(slots=True, frozen=True)
class Interval:
    """Mean of n repeats and the half-width of its 95 % t-interval (None with fewer than 2), its
    ends kept inside the figure's domain (a rate's interval does not go below 0)."""

    n: int
    mean: float | None
    half: float | None
    sd: float | None
    domain: Domain = ANY

    @property
    def low(self) -> float | None:
        if self.mean is None or self.half is None:
            return None
        lo = self.domain[0]
        return self.mean - self.half if lo is None else max(lo, self.mean - self.half)

    @property
    def high(self) -> float | None:
        if self.mean is None or self.half is None:
            return None
        hi = self.domain[1]
        return self.mean + self.half if hi is None else min(hi, self.mean + self.half)


def _finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def interval(values: Sequence[float | None], domain: Domain = ANY) -> Interval:
    xs = _finite(values)
    n = len(xs)
    if not n:
        return Interval(0, None, None, None, domain)
    mean = math.fsum(xs) / n
    if n < 2:
        return Interval(1, mean, None, None, domain)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return Interval(n, mean, t975(n - 1) * sd / math.sqrt(n), sd, domain)


def noise_floor(baseline: Sequence[float | None]) -> float | None:
    """A vs A, in the figure's unit: the largest distance between two baseline repeats (their range);
    None below 2 repeats."""
    xs = _finite(baseline)
    return max(xs) - min(xs) if len(xs) >= 2 else None


def noise_floor_pct(baseline: Sequence[float | None]) -> float | None:
    """The noise floor in % of the baseline's mean; None below 2 repeats or with a mean of 0."""
    xs, floor = _finite(baseline), noise_floor(baseline)
    mean = math.fsum(xs) / len(xs) if xs else 0.0
    return None if floor is None or mean == 0 else 100 * floor / abs(mean)


@dataclass(slots=True, frozen=True)
class Change:
    pct: float | None  # mean B / mean A − 1, in % (None with a baseline mean of 0)
    floor_pct: float | None  # the noise floor it must beat, in % of the baseline's mean
    verdict: str  # "changed", "within noise", "no change (both 0)", "not judged (...)"
    diff: float | None = None  # mean B − mean A, in the figure's unit
    floor: float | None = None  # the noise floor, in the figure's unit
    detectable: float | None = None  # the smallest |B − A| these repeats would call changed (unit)
    detectable_pct: float | None = None  # the same in % of the baseline's mean (a ratio: in the change's direction)
    as_ratio: bool = False  # judged as a ratio: a fall and a rise of the same ratio are different percentages


def _welch_half(a: Interval, b: Interval) -> float:
    """Half-width of Welch's 95 % interval of mean B − mean A (0 when neither varies)."""
    va, vb = (a.sd or 0.0) ** 2 / a.n, (b.sd or 0.0) ** 2 / b.n
    if va + vb == 0:
        return 0.0
    df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1)) + (vb ** 2 / (b.n - 1)))
    return t975(max(1.0, df)) * math.sqrt(va + vb)


def _ratio_change(base: list[float], other: list[float], pct: float, diff: float, floor: float | None) -> Change:
    """A change of a figure that cannot be negative, every repeat above 0: judged as a ratio (on the
    logarithms), so a fall to a hundredth is as plain as a rise to a hundred times and a floor never
    asks for more than a figure can fall. Welch on ln x; the floor is the largest ln(a_i / a_j)."""
    logs = [math.log(x) for x in base]
    la, lb = interval(logs), interval([math.log(x) for x in other])
    half, log_floor = _welch_half(la, lb), max(logs) - min(logs)
    shift = abs((lb.mean or 0.0) - (la.mean or 0.0))  # ln of the ratio of the geometric means
    least = max(half, log_floor)  # the smallest ratio these repeats could call changed, as a ln
    least_pct = 100 * (-math.expm1(-least) if diff < 0 else math.expm1(least))  # a fall: 1 − 1/ratio
    return Change(pct, 100 * math.expm1(log_floor), "changed" if shift > half and shift > log_floor
                  else "within noise", diff, floor, math.fsum(base) / len(base) * least_pct / 100, least_pct, True)


def change(base: Sequence[float | None], other: Sequence[float | None], domain: Domain = ANY) -> Change:
    """B against the baseline A. A figure with a lower bound of 0 and every repeat above it is judged
    as a ratio (_ratio_change); any other on amounts: Welch's interval of B − A must exclude 0 and
    |B − A| beat the baseline's range."""
    a, b = interval(base), interval(other)
    if a.mean is None or b.mean is None:
        return Change(None, None, "not judged (no figure)")
    diff = b.mean - a.mean
    pct = None if a.mean == 0 else 100 * diff / abs(a.mean)
    floor, floor_pct = noise_floor(base), noise_floor_pct(base)
    if a.n < 2 or b.n < 2:
        return Change(pct, floor_pct, "not judged (fewer than 2 repeats)", diff, floor)
    xa, xb = _finite(base), _finite(other)
    if domain[0] == 0 and min(xa + xb) > 0 and pct is not None:
        return _ratio_change(xa, xb, pct, diff, floor)
    half = _welch_half(a, b)
    detectable = max(half, floor or 0.0)
    detectable_pct = None if a.mean == 0 else 100 * detectable / abs(a.mean)
    if a.mean == 0 and b.mean == 0 and not half:
        return Change(0.0, floor_pct, "no change (both 0)", 0.0, floor, detectable, detectable_pct)
    beyond = abs(diff) > half and abs(diff) > (floor or 0.0) if half else diff != 0 and abs(diff) > (floor or 0.0)
    return Change(pct, floor_pct, "changed" if beyond else "within noise", diff, floor, detectable, detectable_pct)
