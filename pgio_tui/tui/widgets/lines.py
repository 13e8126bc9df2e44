"""LinesView: a widget that shows lines of (text, style-name) runs and repaints only changed lines.

Every pane draws through it (charts, tables, bars, text), which keeps what goes to the terminal
small: a line that did not change is not repainted, a run of one colour is one segment, and colours
come from the theme through palette.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from pgio_tui.tui.palette import palette_of
from pgio_tui.tui.plot import Line


def changed_cells(a: Line, b: Line) -> tuple[int, int]:
    """The cells [start, end) where two lines differ, from their runs (one cell per character):
    a chart whose newest column changed repaints those cells, not the line."""
    n = min(len(a), len(b))
    i = start = 0
    while i < n and a[i] == b[i]:
        start += len(a[i][0])
        i += 1
    if i < n and a[i][1] == b[i][1]:
        ta, tb = a[i][0], b[i][0]
        k = 0
        while k < len(ta) and k < len(tb) and ta[k] == tb[k]:
            k += 1
        start += k
    j, tail = 0, 0
    while j < n - i and a[-1 - j] == b[-1 - j]:
        tail += len(a[-1 - j][0])
        j += 1
    if j < n - i and a[-1 - j][1] == b[-1 - j][1]:
        ta, tb = a[-1 - j][0], b[-1 - j][0]
        k = 0
        while k < len(ta) and k < len(tb) and ta[-1 - k] == tb[-1 - k]:
            k += 1
        tail += k
    la, lb = sum(len(t) for t, _ in a), sum(len(t) for t, _ in b)
    if la != lb:  # what follows moved: repaint to the end of the longer line
        return start, max(start + 1, la, lb)
    return start, max(start + 1, la - tail)


def merge_rows(rows: list[Region]) -> list[Region]:
    """Join changed spans of adjacent lines into rectangles while that does not repaint much more
    than changed: the compositor's cost grows with the number of regions and with their area."""
    out: list[Region] = []
    cur, area = rows[0], rows[0].area
    for r in rows[1:]:
        joined = cur.union(r)
        if r.y == cur.bottom and joined.area <= 2 * (area + r.area):
            cur, area = joined, area + r.area
        else:
            out.append(cur)
            cur, area = r, r.area
    out.append(cur)
    return out


class LinesView(Widget):
    DEFAULT_CSS = """
    LinesView { height: 1; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Line] = []
        self._strips: list[Strip | None] = []
        self._base = None  # the widget's own style: every refresh() drops Textual's cache of it

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme)

    def _on_theme(self, _theme) -> None:
        self._strips = [None] * len(self._lines)
        self._base = None
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._strips = [None] * len(self._lines)

    def set_lines(self, lines: Sequence[Line]) -> None:
        """Show these lines; repaint only those that differ from what is shown."""
        lines = list(lines)
        old = self._lines
        self._lines = lines
        if len(old) != len(lines):
            self._strips = [None] * len(lines)
            self.refresh()
            return
        width = self.size.width
        changed = []
        for y, (a, b) in enumerate(zip(old, lines)):
            if a != b:
                self._strips[y] = None
                start, end = changed_cells(a, b)
                changed.append(Region(start, y, max(1, min(width, end) - start), 1))
        if changed:
            self.refresh(*merge_rows(changed))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, base)
        strip = self._strips[y]
        if strip is None or strip.cell_length != width:
            pal = palette_of(self.app)
            segments = [Segment(text, base + pal[style] if style else base) for text, style in self._lines[y] if text]
            strip = Strip(segments).adjust_cell_length(width, base)
            self._strips[y] = strip
        return strip
