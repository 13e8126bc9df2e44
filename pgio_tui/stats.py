"""The one percentile definition every figure uses (per-tick latency percentiles, a recording's p99
for replay's moments, the p95 rows of a diff, the bootstrap interval): linear interpolation between
the closest ranks, numpy's default (Hyndman and Fan's type 7). docs/metrics.md says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DEFINITION = "linear interpolation between the closest ranks (numpy's default; Hyndman and Fan type 7)"


def percentile(ordered: Sequence[float], pct: float) -> float | None:
    """The pct-th percentile (0-100) of an ascending sequence; None when it is empty."""
    if not ordered:
        return None
    pos = (len(ordered) - 1) * pct / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
