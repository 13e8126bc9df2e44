"""Counts summed over the time window and kept between redraws: a redraw adds the ticks that came
into the window and takes off those that left it, instead of summing the whole window again (the
latency pane's slow-transaction and slow-statement counts, every tick; FrameHistory keeps the
waits pane's sums itself). The writes pane's window totals (rate x tick length) keep each tick's
product instead: floats, added again each redraw, but in C.

Exact by construction, so the text is the one FrameHistory's direct sums give: only integers (and
floats holding an integer, which add exactly) are summed this way; a window holding any other
value is summed again from scratch, as is one the kept indexes no longer match (the history was
trimmed or cleared, the window jumped: zoom, pause, seek). Textual-free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import reduce
from operator import add
from typing import Any

from pgio_tui.tui.history import FrameHistory

Rows = Callable[[FrameHistory, int], Iterable[tuple[Any, Any]]]  # tick index -> (key, value) pairs


class WindowSums:
    """Per key: the sum over the window's ticks of the values `rows` gives each tick (None skipped),
    and how many values that was. `update()` returns False when the sums could not be kept exact
    (a value that is not an integer); the caller then sums the window itself."""

    def __init__(self, rows: Rows):
        self._rows = rows
        self._at: tuple | None = None  # (id, epoch) of the history, i, j, tick at i, tick at j - 1
        self.sums: dict[Any, list] = {}  # key -> [integer sum, values summed, of which floats]
        self.exact = True

    def update(self, history: FrameHistory, t0: float, t1: float) -> bool:
        i, j = history.index_range(t0, t1)
        ticks = history.ticks
        at = self._at
        if (at is not None and self.exact and at[0] == (id(history), history.epoch)
                and at[1] <= i <= at[2] <= j and at[1] < len(ticks) and ticks[at[1]] == at[3]
                and (at[2] == 0 or ticks[at[2] - 1] == at[4])):  # the same history, moved on
            self._add(history, at[2], j, 1)
            self._add(history, at[1], i, -1)
        else:
            self.sums, self.exact = {}, True
            self._add(history, i, j, 1)
        self._at = ((id(history), history.epoch), i, j, ticks[i] if i < len(ticks) else None,
                    ticks[j - 1] if j else None)
        return self.exact

    def total(self, key: Any) -> int | float:
        """The window's sum for `key`, as sum() of its values gives it (0 when none; a float when
        any value was)."""
        s = self.sums.get(key)
        if s is None:
            return 0
        return float(s[0]) if s[2] else s[0]

    def _add(self, history: FrameHistory, a: int, b: int, sign: int) -> None:
        sums = self.sums
        for k in range(a, b):
            for key, v in self._rows(history, k):
                if v is None:
                    continue
                if v.__class__ is int:
                    floats = 0
                elif v.__class__ is float and v.is_integer():
                    v, floats = int(v), 1
                else:
                    self.exact = False
                    return
                s = sums.get(key)
                if s is None:
                    s = sums[key] = [0, 0, 0]
                s[0] += sign * v
                s[1] += sign
                s[2] += sign * floats
                if not s[1]:
                    del sums[key]


def column_rows(metrics: Iterable[str]) -> Rows:
    """A tick's values of these metrics as (metric, value)."""
    metrics = tuple(metrics)

    def rows(history: FrameHistory, k: int) -> list[tuple[str, Any]]:
        series = history.series
        return [(m, series[m][k]) for m in metrics if m in series]
    return rows


class WindowTotals:
    """FrameHistory.total() (a rate times its tick's length, summed over the window) with each
    tick's product kept between redraws: a redraw works out the products of the ticks that came in,
    and the window's are added in C (functools.reduce over operator.add, from 0.0, in index order:
    the very additions total()'s loop makes, so the same float, on any Python; a tick without the
    value adds 0.0, which leaves a sum that is never -0.0 as it was)."""

    def __init__(self):
        self._at: tuple | None = None  # (id, epoch) of the history and its first tick: indexes still valid
        # metric -> (first index worked out, products (0.0 for a tick without the value), how many
        # of the products before each index had a value)
        self._products: dict[str, tuple[int, list, list]] = {}

    def total(self, history: FrameHistory, metric: str, t0: float, t1: float) -> float | None:
        ticks = history.ticks
        at = ((id(history), history.epoch), ticks[0] if ticks else None)
        if at != self._at:
            self._at, self._products = at, {}
        i, j = history.index_range(t0, t1)
        col = history.series.get(metric)
        if col is None or j - i < 2:
            return history.total(metric, t0, t1)
        start, products, seen = self._products.get(metric, (i + 1, [], [0]))
        if i + 1 < start:  # the window reaches further back than what was worked out
            start, products, seen = i + 1, [], [0]
        t = history.t
        n = seen[-1]
        for k in range(start + len(products), j):
            v = col[k]
            if v is None:  # adds nothing: the sum never is -0.0, so + 0.0 leaves it as it was
                products.append(0.0)
            else:
                products.append(float(v) * (t[k] - t[k - 1]))
                n += 1
            seen.append(n)
        self._products[metric] = (start, products, seen)
        a, b = i + 1 - start, j - start
        return reduce(add, products[a:b], 0.0) if seen[b] > seen[a] else None
