"""Is a difference between two runs bigger than the noise inside them? A block bootstrap says.

Every statistic the diff judges is a function of a few sums of per-unit quantities (a unit is a
tick, or a checkpoint): a mean is Σx/Σ1, a transaction-weighted mean Σn·x/Σn, a share Σx/Σall, a
pooled standard deviation comes from Σn, Σn·m and Σn·(s²+m²). An `Estimate` holds those per-unit
columns and the function that turns their sums into the statistic.

The noise judgement resamples each run on its own. Ticks are autocorrelated (a checkpoint or a
Dirty build-up lasts many ticks), so they are cut into consecutive blocks, merged until the
statistic per block is nearly uncorrelated with the next; blocks are drawn with replacement
RESAMPLES times and the statistic recomputed from the drawn sums, its spread widened for the few
blocks a short run has. The 2.5 and 97.5 percentiles of B*/A* − 1 are the 95 % interval of the
change (of B* − A* when A* can be 0); when it excludes 0 the change is judged beyond noise. The
draws are seeded, so the same two files always give the same verdicts.
docs/diff.md explains the choice and its limits.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

from pgio_tui.stats import percentile

RESAMPLES = 1000
LEVEL = 0.95
MAX_BLOCKS = 50  # blocks per run: enough for a stable interval, few enough to stay fast (<= 256)
MIN_BLOCKS = 8  # fewer blocks than this on either side: not judged
MAX_LAG1 = 0.2  # blocks are merged while the lag-1 autocorrelation of their statistic is above this
SEED = 20240617

Combine = Callable[[Sequence[float]], float | None]


@dataclass(slots=True)
class Estimate:
    """A statistic as `combine(sums of columns)` over per-unit columns of equal length."""

    columns: tuple[list[float], ...]
    combine: Combine
    independent: bool = False  # units that do not influence each other (checkpoints): no blocks needed
    _value: float | None = field(default=None, init=False, repr=False, compare=False)
    _known: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def units(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def value(self) -> float | None:
        if not self._known:
            self._value, self._known = self.combine([math.fsum(c) for c in self.columns]), True
        return self._value

    def block_length(self) -> int:
        return block_length(self.units, self.independent)


def block_length(n: int, independent: bool = False) -> int:
    """n^(1/3) ticks (the usual rate for block bootstraps; 1 for independent units), longer when
    that would make more than MAX_BLOCKS blocks (grouping is harmless, and keeps it fast)."""
    return max(1, 1 if independent else math.ceil(n ** (1 / 3)), math.ceil(n / MAX_BLOCKS))


def total_over(units: int) -> Combine:
    """A total (buffers written, seconds above a threshold, slow transactions) from the sums of
    (per-unit amount, 1): the mean per unit times the run's units, so a draw that happens to hold
    a short last block is not a smaller total."""
    return lambda sums: sums[0] / sums[1] * units if sums[1] else None


def ratio(sums: Sequence[float]) -> float | None:
    """sums[0] / sums[1]: means, weighted means, shares, fractions of time."""
    return sums[0] / sums[1] if sums[1] else None


def pooled_stddev(sums: Sequence[float]) -> float | None:
    """Standard deviation of all items from per-unit (n, n·mean, n·(stddev² + mean²)) sums."""
    n, s1, s2 = sums
    if not n:
        return None
    return math.sqrt(max(0.0, s2 / n - (s1 / n) ** 2))


@dataclass(frozen=True, slots=True)
class Judgement:
    low: float | None  # 95 % interval of B − A, in the statistic's unit
    high: float | None
    low_pct: float | None  # 95 % interval of B/A − 1 in % (None when a draw of A is 0)
    high_pct: float | None
    beyond_noise: bool | None  # None: not judged (too few units, no value)
    why: str = ""  # why a judged statistic got no verdict, for the user
    few: str = ""  # the sides with too few independent blocks to judge: "A", "B" or "AB"


NOT_JUDGED = Judgement(None, None, None, None, None)


@lru_cache(maxsize=64)
def _draws(blocks: int, seed: int) -> tuple[itemgetter, ...]:
    """RESAMPLES draws of `blocks` block indices with replacement, each as an itemgetter that
    picks the drawn block sums out of a list. Shared by every statistic with the same number of
    blocks, so the draws are made once per run."""
    picks = _uniform_bytes(blocks, blocks * RESAMPLES, random.Random(seed * 1_000_003 + blocks))
    return tuple(itemgetter(*picks[i:i + blocks]) for i in range(0, len(picks), blocks))


def _uniform_bytes(k: int, n: int, rng: random.Random) -> bytes:
    """n values uniform in [0, k) (k <= 256) as bytes, drawn in C: random bytes, those at or above
    the largest multiple of k rejected (no modulo bias), the rest taken modulo k."""
    limit = 256 // k * k
    table = bytes(b % k if b < limit else 0 for b in range(256))
    reject = bytes(range(limit, 256))
    out = b""
    while len(out) < n:
        out += rng.randbytes(n + n // 8 + 16).translate(table, reject)
    return out[:n]


def _block_sums(column: list[float], length: int) -> tuple[float, ...]:
    return tuple(sum(column[i:i + length]) for i in range(0, len(column), length))


@lru_cache(maxsize=256)
def _resampled_sums(sums: tuple[float, ...], seed: int) -> tuple[float, ...]:
    """The column's total in every draw (cached: many statistics share a column, e.g. seconds)."""
    if len(sums) == 1:
        return (sums[0],) * RESAMPLES
    return tuple(sum(pick(sums)) for pick in _draws(len(sums), seed))


def _lag1(values: list[float]) -> float:
    """Lag-1 autocorrelation (0 for a constant series)."""
    m = math.fsum(values) / len(values)
    d = [v - m for v in values]
    var = math.fsum(x * x for x in d)
    return math.fsum(a * b for a, b in zip(d, d[1:])) / var if var > 0 else 0.0


def blocks(e: Estimate) -> list[tuple[float, ...]] | None:
    """Block sums of each column, with blocks long enough that consecutive ones are nearly
    independent: starting from block_length(), the blocks are merged in pairs while the statistic
    computed per block has a lag-1 autocorrelation above MAX_LAG1 and above 1/sqrt(blocks) (the
    estimate's own noise, so few blocks are not merged on chance). None when fewer than MIN_BLOCKS
    blocks remain (the run is too short, or too slow-moving, to say anything about its noise)."""
    sums = [_block_sums(c, e.block_length()) for c in e.columns]
    while sums and len(sums[0]) >= MIN_BLOCKS:
        if e.independent:
            return sums
        per_block = [v for v in map(e.combine, zip(*sums)) if v is not None]
        if len(per_block) < MIN_BLOCKS:
            return None
        if _lag1(per_block) <= max(MAX_LAG1, 1 / math.sqrt(len(per_block))):  # 1/sqrt(k): its own noise
            return sums
        sums = [tuple(s[i] + s[i + 1] if i + 1 < len(s) else s[i] for i in range(0, len(s), 2)) for s in sums]
    return None


def _t975(df: int) -> float:
    """Student's t 97.5 % quantile (Cornish-Fisher expansion; within 0.3 % for df >= 5)."""
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def widening(k: int) -> float:
    """How much wider the spread of k-block draws must be made: the bootstrap spread of a mean of k
    blocks is sqrt((k-1)/k) of the real one, and with few blocks the interval should be Student's
    t, not normal. About 1.29 for 8 blocks, 1.04 for 50."""
    return math.sqrt(k / (k - 1)) * _t975(k - 1) / 1.959964


def resampled(e: Estimate, seed: int) -> list[float] | None:
    """The statistic recomputed on RESAMPLES block-bootstrap draws (None values dropped), spread
    around the statistic by widening() (a figure that cannot be negative stays >= 0); None when the
    estimate cannot be judged (see blocks())."""
    sums, value = blocks(e), e.value()
    if sums is None or value is None:
        return None
    drawn = [_resampled_sums(s, seed) for s in sums]
    combine = e.combine
    raw = [v for v in map(combine, zip(*drawn)) if v is not None]
    w = widening(len(sums[0]))
    floor = 0.0 if value >= 0 and all(v >= 0 for v in raw) else -math.inf  # counts, levels: never below 0
    return [max(floor, value + (v - value) * w) for v in raw]


def judge(a: Estimate | None, b: Estimate | None, names: tuple[str, str] = ("A", "B")) -> Judgement:
    """The 95 % interval of B/A − 1 (when no draw of A is 0; else only that of B − A), and
    whether the interval excludes 0. `names`: what the runs are called where no verdict is said."""
    if a is None or b is None:
        return NOT_JUDGED
    if a.value() is None or b.value() is None:
        return NOT_JUDGED
    ra, rb = resampled(a, SEED), resampled(b, SEED + 1)
    if not ra or not rb:
        short = [side for side, r in (("A", ra), ("B", rb)) if not r]
        named = [names[0] if side == "A" else names[1] for side in short]
        return Judgement(None, None, None, None, None,
                         f"no verdict: too few independent blocks in {' and '.join(named)} (under {MIN_BLOCKS})",
                         "".join(short))
    q = (1 - LEVEL) / 2
    diffs = sorted(y - x for x, y in zip(ra, rb))
    lo, hi = percentile(diffs, 100 * q), percentile(diffs, 100 * (1 - q))
    if lo is None or hi is None:  # no draws (ra and rb are not empty: never)
        return NOT_JUDGED
    if all(x > 0 for x in ra) or all(x < 0 for x in ra):
        rel = sorted(100 * (y / x - 1) for x, y in zip(ra, rb))
        lo_pct, hi_pct = percentile(rel, 100 * q), percentile(rel, 100 * (1 - q))
        if lo_pct is not None and hi_pct is not None:
            return Judgement(lo, hi, lo_pct, hi_pct, lo_pct > 0 or hi_pct < 0)
    return Judgement(lo, hi, None, None, lo > 0 or hi < 0)
