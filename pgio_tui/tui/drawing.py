"""What only a terminal drawing needs: progress bars and chart axis maxima. Numbers, units and durations
are written by pgio_tui.format (shared with replay, diff, export and the report)."""

from __future__ import annotations

import math


def nice_ceiling(v: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above v: stable, readable axis maxima."""
    if v is None or v <= 0 or math.isnan(v):
        return 1.0
    exp = math.floor(math.log10(v))
    base = 10.0 ** exp
    for step in (1, 2, 2.5, 5, 10):
        if v <= step * base * (1 + 1e-9):
            return step * base
    return 10 * base


def bar(frac: float | None, width: int) -> tuple[str, str]:
    """A progress bar split into (done, rest) so each part is one style run: no per-cell colour."""
    if width <= 0:
        return "", ""
    if frac is None:
        return "", "·" * width
    f = min(1.0, max(0.0, float(frac)))
    eighths = int(round(f * width * 8))
    full, part = divmod(eighths, 8)
    done = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part and full < width else "")
    return done, "░" * (width - len(done))
