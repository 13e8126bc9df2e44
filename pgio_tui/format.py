"""The one place numbers, units and durations are written: compact fixed-width forms for panes
that must fit in 80 columns (`si`, `kib`, `ms`, `pct`, `duration`), clock times (`clock`), file sizes
(`size`, read back by `parse_size`), and the fuller form of tables and reports (`number`). The metric catalog gives each unit
its formatter (metrics.Unit.fmt), so every view writes a metric the same way. No imports from pgio_tui: any layer
may use it.
"""

from __future__ import annotations

import math
import re


def si(v: float | None, digits: int = 3) -> str:
    """1234 -> '1.2k', 0.5 -> '0.5', None -> '-': a rate in at most ~5 characters."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a < _SI_FROM:  # the usual case: no multiple
        return _num(v, digits)
    for div, at, suffix in _SI:
        if a >= at:
            return _num(v / div, digits) + suffix
    return _num(v, digits)


_SI = tuple((div, div * 0.9995, suffix) for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")))
_SI_FROM = _SI[-1][1]  # below this, no multiple


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
    if a >= 0.995:  # rounds to 1: said as 1, as 1.0 is, not "1.00" beside a "0"
        return f"{v:.0f}"
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


def size(n: float) -> str:
    """A file size in bytes as '512 B', '1.5 MB' (binary multiples)."""
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n:.0f} B"


_SIZE_UNITS = {"": 1, "b": 1, **{f"{p}{b}": 1024 ** (i + 1) for i, p in enumerate("kmgt") for b in ("", "b", "ib")}}


def parse_size(text: str) -> int:
    """`2GB`, `500MB`, `2GiB`, `512k`, bytes -> bytes (1024-based, as PostgreSQL's settings).
    ValueError names the text."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"not a size: {text!r} (e.g. 500MB, 2GB, 2GiB)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


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


def fraction(v: float | None) -> str:
    """A fraction 0-1 as a share: 0.45 -> '45%'."""
    return pct(v, 100)


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


def clock(seconds: float, hours: bool = False) -> str:
    """Seconds as m:ss, or h:mm:ss from an hour on (always, with `hours`); negative for before an origin."""
    sign, x = ("-" if seconds < 0 else ""), int(round(abs(seconds)))
    h, m, sec = x // 3600, x % 3600 // 60, x % 60
    return f"{sign}{h}:{m:02d}:{sec:02d}" if h or hours else f"{sign}{m}:{sec:02d}"


def window(s: float) -> str:
    """A time window as '5m', '90s', '1h'."""
    s = int(s)
    if s % 3600 == 0:
        return f"{s // 3600}h"
    if s % 60 == 0:
        return f"{s // 60}m"
    return f"{s}s"


# --- tables and reports -------------------------------------------------------------------------

COUNT_UNITS = {"buffers", "checkpoints", "fsyncs", "transactions", "statements", "ticks"}
DASH = "–"


def number(v: float | None, unit: str = "") -> str:
    """A value with the digits it deserves: counts whole, others 3-4 significant digits."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return DASH
    if unit in COUNT_UNITS and float(v).is_integer():
        return f"{v:,.0f}"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 0.01:
        return f"{v:.3f}"
    return f"{v:.2g}"


def fit_fields(fields: list[str], width: int, sep: str = " · ") -> str:
    """Fields joined by `sep` within `width` columns: a field that does not fit is left out whole
    (the later, smaller ones may still fit), never cut, so no number loses digits. The first
    field is kept (cut only when it alone is wider than the line)."""
    if not fields:
        return ""
    out = fields[0][:width]
    for f in fields[1:]:
        if len(out) + len(sep) + len(f) <= width:
            out += sep + f
    return out
