"""Braille rasters for the charts: a one-shot Canvas, and the Raster a live chart keeps between ticks.

Textual-free. Both draw the same picture from the same plot.Columns entries; Canvas draws it all
at once (tests, and the reference the Raster is checked against), Raster keeps it as dot columns
at absolute x (x = floor(t / seconds per dot)) so a tick redraws only the columns whose entries
changed and re-renders only the cells that cover them. When the right edge moves by a dot the cells
pair the dot columns differently and every row is rendered again from the kept columns, without
tracing the series again. A change of scale, size or series starts over.

Why the two agree cell for cell: a cell's dots are the OR of what its two dot columns hold, and its
colour is the last series drawn on it; series are drawn in order (threshold lines first), so the
last one is the highest-numbered owner, the max over both columns. A column's content depends only
on the entries at that x and the join from the entry before, so recomputing a range of columns
from the entry before the range gives what a full draw gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from itertools import compress, islice
from operator import ne

Run = tuple[str, str | None]

# Braille dot bits by (row in cell 0-3, column in cell 0-1).
BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
# SPANS[column][a][b]: the bits of rows a..b (a <= b) of one cell column.
SPANS = tuple(tuple(tuple(sum(BITS[r][col] for r in range(a, b + 1)) for b in range(4)) for a in range(4))
              for col in range(2))
# A dot column's rows in one cell as 4 bits (bit i = row i) -> braille bits as the left / right column.
LEFT = tuple(sum(BITS[r][0] for r in range(4) if p >> r & 1) for p in range(16))
RIGHT = tuple(sum(BITS[r][1] for r in range(4) if p >> r & 1) for p in range(16))
ROWS4 = tuple(tuple(((1 << (b - a + 1)) - 1) << a if a <= b else 0 for b in range(4)) for a in range(4))
_ALL = (-math.inf, math.inf)  # the dirty range of series drawn anew
CHARS = tuple(chr(0x2800 + m) if m else " " for m in range(256))


def dot_runs(entries: list, start: int, top: float, ydots: int, stop: float = math.inf
             ) -> Iterator[tuple[int, int, int]]:
    """The vertical dot runs (x, y0, y1) that draw one series from its Columns entries, from
    entries[start] on, up to column `stop`: a run per dot column (min..max), joined to the previous
    column when the ticks are consecutive (a gap in ticks leaves a gap): by widening the run when
    the columns touch, by a line of runs across the columns between them when they do not. Values
    off the scale are drawn at its edge (0..ydots); Canvas and Raster both draw from here."""
    k = ydots / top if top else 0.0
    px: int | None = None  # the previous column drawn (None: none, or a gap before this one)
    py = ptick = 0  # its last dot and tick: read only when px is set
    for n in range(start, len(entries)):
        e = entries[n]
        if e is None:
            px = None
            continue
        x = e[0]
        if x > stop and (px is None or px > stop):
            break  # beyond the range, and no join reaching back into it
        lo = ydots - round(e[4] * k)  # the maximum is the top of the run
        hi = ydots - round(e[3] * k)
        if px is not None and e[5] - ptick == 1:
            if x - px == 1:  # the usual case: join by widening this column's run
                if py < lo:
                    lo = py
                elif py > hi:
                    hi = py
            else:
                first = ydots - round(e[1] * k)
                y0, y1 = min(ydots, max(0, py)), min(ydots, max(0, first))
                prev = y0
                for xx in range(px, x + 1):
                    y = round(y0 + (y1 - y0) * (xx - px) / (x - px))
                    yield xx, prev, y
                    prev = y
        px, py, ptick = x, ydots - round(e[2] * k), e[6]
        yield x, 0 if lo < 0 else (ydots if lo > ydots else lo), 0 if hi < 0 else (ydots if hi > ydots else hi)


class Canvas:
    """A width x height cell grid of braille dots, one owner (style index) per cell."""

    def __init__(self, width: int, height: int):
        self.w, self.h = width, height
        self.xd, self.yd = width * 2, height * 4
        self.mask = bytearray(width * height)
        self.owner = [0] * (width * height)

    def dot(self, x: int, y: int, owner: int) -> None:
        if 0 <= x < self.xd and 0 <= y < self.yd:
            cell = (y >> 2) * self.w + (x >> 1)
            self.mask[cell] |= BITS[y & 3][x & 1]
            self.owner[cell] = owner

    def vspan(self, x: int, y0: int, y1: int, owner: int) -> None:
        """Dots y0..y1 of dot column x: one mask OR per cell row, not one call per dot."""
        if not 0 <= x < self.xd:
            return
        if y0 > y1:
            y0, y1 = y1, y0
        y0, y1 = max(0, y0), min(self.yd - 1, y1)
        if y0 > y1:
            return
        spans, mask, own, w, c = SPANS[x & 1], self.mask, self.owner, self.w, x >> 1
        for r in range(y0 >> 2, (y1 >> 2) + 1):
            top = r << 2
            cell = r * w + c
            mask[cell] |= spans[max(y0, top) - top][min(y1, top + 3) - top]
            own[cell] = owner

    def line(self, x0: int, y0: int, x1: int, y1: int, owner: int) -> None:
        """A connected line: every column between the ends gets a vertical run, so steep
        slopes stay continuous."""
        if x1 == x0:
            self.vspan(x0, y0, y1, owner)
            return
        prev = y0
        for x in range(x0, x1 + 1):
            y = round(y0 + (y1 - y0) * (x - x0) / (x1 - x0))
            self.vspan(x, prev, y, owner)
            prev = y

    def hline(self, y: int, owner: int) -> None:
        for x in range(0, self.xd, 2):
            self.dot(x, y, owner)

    def trace(self, entries: list, owner: int, top: float, right: int) -> None:
        """Draw one series from its Columns entries (see dot_runs), the newest column at the right."""
        shift = self.xd - 1 - right
        for x, y0, y1 in dot_runs(entries, 0, top, self.yd - 1):
            self.vspan(x + shift, y0, y1, owner)

    def rows(self, styles: Sequence[str | None]) -> list[list[Run]]:
        out = []
        for r in range(self.h):
            base = r * self.w
            out.append(runs([CHARS[m] for m in self.mask[base:base + self.w]],
                            [styles[o] if m else None for m, o in zip(self.mask[base:base + self.w],
                                                                      self.owner[base:base + self.w])]))
        return out


def runs(chars: list[str], styles: list[str | None]) -> list[Run]:
    """Cells as runs of one style (where the style changes is found by C code: map and compress)."""
    n = len(chars)
    out: list[Run] = []
    start = 0
    for c in compress(range(1, n), map(ne, islice(styles, 1, None), styles)):
        out.append(("".join(chars[start:c]), styles[start]))
        start = c
    if n:
        out.append(("".join(chars[start:]), styles[start]))
    return out


class _Grid:
    """The plot's cells as drawn for one pairing of dot columns into cells (the parity of the
    leftmost dot column): characters, owners and runs per row, at `right`, as of draw `n`."""

    __slots__ = ("right", "n", "chars", "owners", "rows")

    def __init__(self, right: int, plot_w: int, plot_h: int):
        self.right, self.n = right, -1
        self.chars = [[" "] * plot_w for _ in range(plot_h)]
        self.owners = [[0] * plot_w for _ in range(plot_h)]
        self.rows: list[list[Run]] = [[] for _ in range(plot_h)]


class Raster:
    """A chart's plot area kept between ticks (see the module's docstring).

    `draw()` takes the series' entries and what changed in them (plot.Columns.dirty_from) and
    returns the rows as runs; rows that did not change are the same list objects as before.

    When the right edge moves by one dot column, the cells pair the dot columns the other way; the
    grid drawn the last time they were paired so (two dots back, or more) is shifted by whole
    cells, and only the cells of the dot columns computed since then, and the new cells at the
    right, are rendered again: the rest are the same cells by construction (a cell depends only
    on its two dot columns, and the key, with the threshold rows and styles, did not change).
    """

    def __init__(self):
        self.key: tuple | None = None
        self.cols: dict[int, tuple[bytearray, bytearray]] = {}  # x -> (4-bit dots, owner) per cell row
        self.n = 0  # draws so far
        self.log: list[tuple[int, int, int]] = []  # (draw, a, b): dot columns a..b computed at that draw
        self.grids: dict[int, _Grid] = {}  # parity of the leftmost dot column -> its grid
        self.low = 0  # no dot column left of this is kept
        self.rows: list[list[Run]] = []

    def draw(self, key: tuple, series: list[tuple[list, float, int]], dirty: list[tuple[float, float]], right: int,
             plot_w: int, plot_h: int, hrows: dict[int, tuple[int, int]], styles: Sequence[str | None]
             ) -> list[list[Run]]:
        """`series`: (entries, y maximum, owner) in drawing order; `key` names everything but the
        data and the right edge (sizes, scales, series, threshold rows); `dirty`: ranges of x
        whose entries changed since the last draw (one range from -inf: all). `hrows`: cell row ->
        (4-bit dots of its threshold line, owner)."""
        xd = plot_w * 2
        first = right - xd + 1  # the x of the leftmost dot column on screen
        self.n += 1
        reset = key != self.key or _ALL in dirty
        if reset:
            self.key, self.cols, self.log, self.grids = key, {}, [], {}
            ranges = [(first, right)]
        else:
            cols = self.cols
            if first - self.low > len(cols):
                for x in [x for x in cols if x < first]:
                    del cols[x]
            else:
                for x in range(self.low, first):
                    cols.pop(x, None)
            # clamped to the screen: whole dot columns (a range may run to +inf: "from here on")
            ranges = _merge([(int(max(first, a)), int(min(right, b))) for a, b in dirty if b >= first and a <= right])
        self.low = first
        for a, b in ranges:
            self._columns(a, b, series, plot_h)
            self.log.append((self.n, a, b))
        grid = self.grids.get(first & 1)
        k = 0 if grid is None else (right - grid.right) >> 1
        if grid is None or not 0 <= k < plot_w:  # nothing to shift: a fresh grid, every cell rendered
            k = 0
            grid = self.grids[first & 1] = _Grid(right, plot_w, plot_h)
            cells: Sequence[int] = range(plot_w)
        else:
            since = grid.n
            todo = set(range(plot_w - k, plot_w))
            for n, a, b in self.log:
                if n > since and b >= first:
                    todo.update(range(max(0, (a - first) >> 1), min(plot_w - 1, (b - first) >> 1) + 1))
            cells = sorted(todo)
        grid.n = self.n
        if k or cells:
            self._render(grid, k, cells, first, plot_h, hrows, styles)
        grid.right = right
        oldest = min(g.n for g in self.grids.values())  # what no kept grid needs any more
        self.log = [e for e in self.log if e[0] > oldest]
        self.rows = grid.rows
        return grid.rows

    def _columns(self, a: int, b: int, series: list[tuple[list, float, int]], plot_h: int) -> None:
        """Recompute dot columns a..b from every series, in drawing order."""
        cols = self.cols
        for x in range(a, b + 1):
            cols[x] = (bytearray(plot_h), bytearray(plot_h))
        ydots = plot_h * 4 - 1
        for ents, top, owner in series:
            # start at the entry before the first one at or after a: its join reaches into the range
            for x, y0, y1 in dot_runs(ents, _before(ents, a), top, ydots, b):
                if a <= x <= b:
                    self._vspan(x, y0, y1, owner)

    def _vspan(self, x: int, y0: int, y1: int, owner: int) -> None:
        """Dots y0..y1 (both within the plot) of column x."""
        if y0 > y1:
            y0, y1 = y1, y0
        dots, own = self.cols[x]
        for r in range(y0 >> 2, (y1 >> 2) + 1):
            t = r << 2
            dots[r] |= ROWS4[(y0 if y0 > t else t) - t][(y1 if y1 < t + 3 else t + 3) - t]
            own[r] = owner  # series are drawn in order: the last one owns the cell

    def _render(self, grid: _Grid, k: int, cells: Sequence[int], first: int, plot_h: int,
                hrows: dict[int, tuple[int, int]], styles: Sequence[str | None]) -> None:
        """Shift the grid left by k cells, then render `cells` of every row from the dot columns;
        a row whose cells did not change keeps its runs (the same object)."""
        empty = (bytes(plot_h), bytes(plot_h))
        get = self.cols.get
        pairs = [(c, get(first + 2 * c, empty), get(first + 2 * c + 1, empty)) for c in cells]
        style_of = styles.__getitem__  # styles[0] is None: the cell is blank
        for r in range(plot_h):
            hdots, howner = hrows.get(r, (0, 0))
            hmask = LEFT[hdots]
            chars, owners = grid.chars[r], grid.owners[r]
            if k:
                was = chars, owners
                chars = grid.chars[r] = chars[k:] + [" "] * k
                owners = grid.owners[r] = owners[k:] + [0] * k
            changed = False
            for c, (ld, lo), (rd, ro) in pairs:
                m = LEFT[ld[r]] | RIGHT[rd[r]] | hmask
                if m:
                    o = lo[r] if ld[r] else 0
                    if rd[r] and ro[r] > o:
                        o = ro[r]
                    if hdots and howner > o:
                        o = howner
                else:
                    o = 0
                ch = CHARS[m]
                if ch != chars[c] or o != owners[c]:
                    chars[c], owners[c] = ch, o
                    changed = True
            if k:
                changed = chars != was[0] or owners != was[1]
            if changed or not grid.rows[r]:
                grid.rows[r] = runs(chars, list(map(style_of, owners)))


def _before(ents: list, a: int) -> int:
    """The index of the last entry left of dot column `a` (0 when none): where drawing columns from
    `a` on starts, its join reaching into them. Searched from the nearer end (a redraw's ranges
    lie at the window's edges)."""
    n = len(ents)
    if not n:
        return 0
    head, tail = ents[0], ents[-1]
    if head is not None and tail is not None and a - head[0] < tail[0] - a:
        i = 0  # from the left: the first entry at or after a, then back over the breaks before it
        while i < n and (ents[i] is None or ents[i][0] < a):
            i += 1
        while i > 0 and ents[i - 1] is None:
            i -= 1
    else:
        i = n
        while i > 0 and (ents[i - 1] is None or ents[i - 1][0] >= a):
            i -= 1
    return i - 1 if i else 0


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(r for r in ranges if r[0] <= r[1]):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
