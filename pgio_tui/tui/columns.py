"""Series reduced to absolute dot columns and kept between redraws: the data half of a chart.

A Columns holds one series as entries [x, first, last, min, max, first_tick, last_tick], one per
dot column x = floor(t / seconds per dot) and run of consecutive ticks, None marking a break. A
redraw reduces only the samples that arrived since the previous one and says which x ranges
changed (`dirty`), so the Raster (raster.py) redraws only those columns. Textual-free.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from pgio_tui.tui.history import FrameHistory


def finite(v) -> float | None:
    """A number that can be drawn, or None (missing, text, NaN, infinite)."""
    if v is None or isinstance(v, str):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


class Columns:
    """One series reduced to absolute dot columns (x = floor(t / seconds per dot)) and kept between
    redraws: a redraw reduces only the samples that arrived since the previous one.

    An entry is [x, first, last, min, max, first_tick, last_tick] of consecutive ticks; None marks
    a break (a missing value). Rebuilt when the history, the metric or the dot width changes, or
    when the window's end moves back (replay seeking). Samples the history trims from its front
    (a short interval on a long window) leave the entries as they leave the window's left edge.
    """

    __slots__ = ("key", "entries", "last_t", "dirty", "top", "front")

    def __init__(self):
        self.key: tuple | None = None
        self.entries: list = []
        self.last_t = -math.inf
        self.dirty: list[tuple[float, float]] = []  # x ranges the last update changed (-inf: all)
        self.top: float | None = None  # the largest value in the entries
        self.front: float | None = None  # the history's first time at the last update (it trims its front)

    def update(self, history: FrameHistory, metric: str, t0: float, t1: float, dot_s: float) -> list:
        """The entries of the samples in [t0, t1]; `dirty` says which x ranges changed."""
        key = (id(history), history.epoch, metric, dot_s)
        self.dirty = []
        if key != self.key or t1 < self.last_t:
            self.key, self.entries, self.last_t, self.top = key, [], -math.inf, None
            self.dirty.append((-math.inf, math.inf))
        ts = history.t
        i = bisect_right(ts, self.last_t) if self.last_t > t0 else bisect_left(ts, t0)
        j = bisect_right(ts, t1)
        col = history.series.get(metric)
        entries = self.entries
        n_before = len(entries)
        if col is not None and i < j:
            self.top = _reduce(col, ts, history.ticks, i, j, dot_s, entries, self.top)
            # from the last entry kept: it took the new samples, or a join from it to a new entry
            # may cross it (a join into an entry depends only on the entry before and its first value)
            m = max(0, n_before - 1)
            while m < len(entries) and entries[m] is None:
                m += 1
            if m < len(entries):
                self.dirty.append((entries[m][0], math.inf))
        if j:
            self.last_t = max(self.last_t, ts[j - 1])
        front = ts[0] if ts else None
        if front is not None and front > t0 and front != self.front:
            t0 = front  # the history let go of samples inside the window: they leave it too
        self.front = front
        left = math.floor(t0 / dot_s)
        if entries and (entries[0] is None or entries[0][0] <= left):
            self._trim(history, col, ts, t0, j, left, dot_s)
        return entries

    def _trim(self, history: FrameHistory, col: list | None, ts: list, t0: float, j: int, left: int,
              dot_s: float) -> None:
        """Drop what is left of the window, and reduce the first dot column again from the samples
        at or after t0 only: it may hold older samples of the same column (so the picture is the one
        a fresh reduction of the window gives)."""
        entries = self.entries
        k = 0
        while k < len(entries) and (entries[k] is None or entries[k][0] <= left):
            k += 1
        gone = entries[:k]
        del entries[:k]
        front: list = []
        if col is not None:
            i0 = bisect_left(ts, t0)
            end = j
            if entries:  # up to the first sample of the first entry kept
                end = i0
                while end < j and history.ticks[end] != entries[0][5]:
                    end += 1
            if i0 < end:
                _reduce(col, ts, history.ticks, i0, end, dot_s, front, None)
                if front and front[-1] is None and not entries:
                    front.pop()
        entries[:0] = front
        while entries and entries[0] is None:
            del entries[0]
        lo = next((e[0] for e in gone if e is not None), left)  # the first column that lost samples
        self.dirty.append((min(lo, left), entries[0][0] if entries else left))
        top = self.top
        if top is not None and any(e is not None and e[4] >= top for e in gone) and not any(
                e is not None and e[4] >= top for e in front):  # the largest value left (and did not come back)
            self.top = max((e[4] for e in entries if e is not None), default=None)


def _reduce(col: list, ts: list, ticks: list, i: int, j: int, dot_s: float, entries: list,
            top: float | None) -> float | None:
    """Append samples i..j-1 to `entries` (see Columns); returns the new largest value."""
    floor = math.floor
    cur = entries[-1] if entries else None
    for k in range(i, j):
        raw = col[k]
        if raw is None or raw.__class__ is str or raw != raw or raw in (math.inf, -math.inf):
            if cur is not None:
                entries.append(None)
            cur = None
            continue
        v, tick = float(raw), ticks[k]
        if top is None or v > top:
            top = v
        x = floor(ts[k] / dot_s)
        if cur is not None and cur[0] == x and tick - cur[6] == 1:
            cur[2] = v
            if v < cur[3]:
                cur[3] = v
            elif v > cur[4]:
                cur[4] = v
            cur[6] = tick
        else:
            cur = [x, v, v, v, v, tick, tick]
            entries.append(cur)
    return top
