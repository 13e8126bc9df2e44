"""What only a terminal drawing needs: progress bars and chart axis maxima. Numbers, units and durations
are written by pgio_tui.format (shared with replay, diff, export and the report)."""

from __future__ import annotations

import math
from operator import itemgetter

_text = itemgetter(0)  # a run's text


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


def fit(runs, width: int) -> tuple:
    """Style runs cut to `width` cells without cutting a word or a number: a line that is too long
    ends at its last separator (a whitespace run, or the start of a run that begins with a space)
    that fits, so a label never loses its value; a line without one is shortened at its last space. Text that does not fit is dropped, never cut."""
    if sum(map(len, map(_text, runs))) <= width:  # the usual case, in C
        return tuple(filter(_text, runs))
    out, used, brk = [], 0, 0
    for text, style in runs:
        if used + len(text) <= width:
            out.append((text, style))
            used += len(text)
            if not text.strip():
                brk = len(out)
            continue
        if not text.strip():
            break
        if text[0] == " ":  # a run that begins with a space starts a new item: drop it whole
            brk = len(out)
        if not brk:  # no separator yet: shorten this run at a word boundary
            head = text[: width - used + 1]
            cut = head.rfind(" ")
            if cut > 0:
                out.append((head[:cut].rstrip(), style))
            break
        out = out[:brk]
        break
    while out and not out[-1][0].strip():
        out.pop()
    return tuple(r for r in out if r[0])
