"""Short, fixed-width renderings of numbers for panes that must fit in 80 columns.

Textual-free: replay, diff and the report can use the same spelling of a value.
"""

from __future__ import annotations

import math


def si(v: float | None, digits: int = 3) -> str:
    """1234 -> '1.2k', 0.5 -> '0.5', None -> '-': a rate in at most ~5 characters."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div * 0.9995:
            return _num(v / div, digits) + suffix
    return _num(v, digits)


def _num(v: float, digits: int) -> str:
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.{max(0, digits - 2)}f}"
    if a >= 1:
        return f"{v:.{max(0, digits - 1)}f}".rstrip("0").rstrip(".") if digits > 1 else f"{v:.0f}"
    return f"{v:.2f}" if a >= 0.01 else f"{v:.1g}"


def kib(v_kb: float | None) -> str:
    """A size given in kB as '312M', '1.5G' (binary multiples, as /proc/meminfo counts)."""
    if v_kb is None:
        return "-"
    b = float(v_kb) * 1024
    for div, suffix in ((1 << 40, "T"), (1 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")):
        if abs(b) >= div:
            x = b / div
            return (f"{x:.1f}" if x < 10 else f"{x:.0f}") + suffix
    return f"{b:.0f}"


def ms(v: float | None) -> str:
    """A latency in ms: three significant digits, no unit."""
    if v is None:
        return "-"
    if v >= 10_000:
        return si(v)
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def pct(v: float | None, scale: float = 1.0) -> str:
    """A share as '45%'; `scale` = 100 when v is a fraction."""
    if v is None:
        return "-"
    return f"{v * scale:.0f}%"


def duration(s: float | None) -> str:
    """Seconds as '45s', '12m30s', '3h05m', '4d03h': at most 6 characters."""
    if s is None:
        return "-"
    s = max(0, int(round(s)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s" if s % 60 else f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def window(s: float) -> str:
    """A time window as '5m', '90s', '1h'."""
    s = int(s)
    if s % 3600 == 0:
        return f"{s // 3600}h"
    if s % 60 == 0:
        return f"{s // 60}m"
    return f"{s}s"


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
