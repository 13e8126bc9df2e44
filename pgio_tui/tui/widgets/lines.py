"""LinesView: a widget that shows lines of (text, style-name) runs and repaints only changed lines.

Every pane draws through it (charts, tables, bars, text), which keeps what goes to the terminal
small: a line that did not change is not repainted, a run of one colour is one segment, and colours
come from the theme through palette.py.

Each segment costs its text plus a full SGR sequence and a reset (~30 bytes of truecolour), so
`segments()` joins runs whose difference cannot be seen: a run of blanks takes the style of the
run beside it when only the foreground colour or boldness differs (invisible on a blank cell). The
cells look the same, cell by cell; a braille chart row becomes one segment per series instead of
one per stretch of dots.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from pgio_tui.safe_text import printable
from pgio_tui.tui import textual_private
from pgio_tui.tui.palette import palette_of
from pgio_tui.tui.plot import Line

textual_private.install()  # every view drawn with LinesView sends only the cells that changed (when on)

# Text of characters one cell wide each (ASCII, Latin, Greek, punctuation, arrows, maths, box
# drawing, blocks, shapes, braille):
# its width is its length without rich's per-character lookup. Anything else asks cell_len.
_NARROW = re.compile("[\x20-\x7e\xa0-\u02ff\u0370-\u03ff\u2010-\u2027\u2030-\u205e\u2190-\u22ff"
                     "\u2500-\u25fc\u2800-\u29ff]*").fullmatch

_painting: set[LinesView] | None = None  # the views changed in the paint under way (one_paint)


@contextmanager
def one_paint(screen) -> Iterator[None]:
    """Draw views inside this, and what changed goes to the terminal once, at the end, in one pass
    (textual_private.paint_now). Outside it each view's refresh() wakes its own message loop, which
    messages the screen, whose idle starts a timer that paints: two messages and a wake-up per
    view per tick. Nested uses join the outer paint."""
    global _painting
    if _painting is not None or not textual_private.on():  # off: each view refreshes, Textual's way
        yield
        return
    changed: set[LinesView] = set()
    _painting = changed
    try:
        yield
    finally:
        _painting = None
        if changed:
            textual_private.paint_now(screen, changed)


def changed_span(a: list[Segment], b: list[Segment]) -> tuple[int, int]:
    """The cells [start, end) where two rows of segments, as wide as each other, differ in a
    character or a style (start == end: in none): a chart whose newest column changed repaints
    those cells, not the row. Compared as segments, not runs: segments() gives a blank the style
    of a neighbour, so blanks beside a changed run may change style (unseen on screen, but not
    the cells a full repaint shows), and runs that differ only in name may look the same."""
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
    end = sum(len(t) for t, _, _ in b) - tail
    return start, max(start, end)


SPAN_GAP = 8  # equal cells that split a row's change in two: about what a cursor move and a colour cost


def changed_spans(a: list[Segment], b: list[Segment]) -> list[tuple[int, int]]:
    """The cells [start, end) where two rows differ, as spans apart by SPAN_GAP equal cells or more:
    a line whose figures change here and there (the vitals line, a pane's text) sends those
    figures, not the row between the first and the last of them."""
    start, end = changed_span(a, b)
    g, n = SPAN_GAP, end - start
    if n <= 2 * g:
        return [(start, end)] if start < end else []
    # Compared SPAN_GAP cells at a time (slices compare in C): the characters first, as most wide
    # changes (a chart that scrolled) leave no chunk the same; then the styles of those that are.
    ta, tb = _text(a)[start:end], _text(b)[start:end]
    if all(ta[c:c + g] != tb[c:c + g] for c in range(g, n - g, g)):
        return [(start, end)]
    sa, sb = _styles(a)[start:end], _styles(b)[start:end]
    chunks = [c for c in range(0, n, g) if ta[c:c + g] != tb[c:c + g] or sa[c:c + g] != sb[c:c + g]]
    if not chunks:  # the same cells, split into other segments
        return []

    def differs(k: int) -> bool:
        return ta[k] != tb[k] or sa[k] is not sb[k] and sa[k] != sb[k]

    spans: list[tuple[int, int]] = []
    first = chunks[0]
    for prev, c in zip(chunks, chunks[1:] + [n + g]):
        if c - prev > g:  # an unchanged chunk between: the span ends in `prev`'s chunk
            lo = next(k for k in range(first, min(first + g, n)) if differs(k))
            hi = next(k for k in reversed(range(prev, min(prev + g, n))) if differs(k))
            spans.append((start + lo, start + hi + 1))
            first = c
    return spans


def _text(segments: list[Segment]) -> str:
    return "".join([text for text, _, _ in segments])


def _styles(segments: list[Segment]) -> list[Style | None]:
    """Each cell's style, of a row of one-cell characters."""
    styles: list[Style | None] = []
    for text, style, _ in segments:
        styles += [style] * len(text)
    return styles


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


def _blank_look(style: Style) -> tuple:
    """What of a style shows on a blank cell: not the foreground colour nor boldness."""
    return (style.bgcolor, style.reverse, style.underline, style.strike, style.overline, style.underline2,
            style.conceal)


def styles_for(base: Style, pal: dict[str, Style]) -> dict[str | None, tuple[Style, tuple]]:
    """Style name -> (the widget's style with it, what of it shows on blanks), built once per
    theme and widget style instead of once per run. Equal styles are one object, and so are equal
    looks: segments() compares them by identity."""
    kept: dict = {}

    def one(style: Style) -> tuple[Style, tuple]:
        style = kept.setdefault(style, style)
        look = _blank_look(style)
        return style, kept.setdefault(look, look)

    out: dict[str | None, tuple[Style, tuple]] = {None: one(base)}
    for name, style in pal.items():
        out[name] = one(base + style)
    return out


def segments(runs: Line, base: Style, pal: dict[str, Style],
             styles: dict[str | None, tuple[Style, tuple]] | None = None) -> list[Segment]:
    """The runs as segments, blank runs folded into a neighbour that looks the same on blanks."""
    if styles is None:
        styles = styles_for(base, pal)
    out: list[Segment] = []
    new = tuple.__new__  # Segment(text, style) without the call of its Python __new__
    text, style, look, blank = "", None, None, True  # the segment being built
    for t, name in runs:
        if not t:
            continue
        st, lk = styles[name]
        b = not t.strip(" ")
        if st is style:
            text += t
            blank = blank and b
        elif (b or blank) and lk is look:
            text += t
            if not b:  # the blanks before take this run's style
                style, blank = st, False
        else:
            if text:
                out.append(new(Segment, (text, style, None)))
            text, style, look, blank = t, st, lk, b
    if text:
        out.append(new(Segment, (text, style, None)))
    return out


class LinesView(Widget):
    DEFAULT_CSS = """
    LinesView { height: 1; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        cache = textual_private.styles_cache(self.content_segments, self._content_styles)
        if cache is not None:  # changed rows framed from kept border segments, one Strip a row
            self._styles_cache = cache
        self._lines: list[Line] = []
        self._segs: list[list[Segment] | None] = []  # a line's segments, padded to the width
        self._base: Style | None = None  # the widget's own style: every refresh() drops Textual's cache of it
        # styles_for(base, palette): rebuilt with the base or the theme
        self._styles: dict[str | None, tuple[Style, tuple]] | None = None
        self._style_list: list[Style] | None = None  # the styles in _styles, a new list with it
        self._area: Size = Size(0, 0)
        self._area_of: Size | None = None  # the outer size `_area` was worked out from
        # background_colors, kept until a style or the theme changes
        self._backgrounds: tuple[Color, Color] | None = None
        # The rows changed in the paint under way (one_paint), to send directly (textual_private/direct.py);
        # None when the view has more to repaint than them (then Textual paints it).
        self._rows: list[Region] | None = None
        self._direct_place = None  # where direct.py found the content on screen, and what that held for

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme)

    def _on_theme(self, _theme) -> None:
        self._segs = [None] * len(self._lines)
        self._base = self._styles = self._backgrounds = self._direct_place = None
        self.refresh()

    @property
    def background_colors(self):
        """Textual's background_colors (blended over every ancestor), kept: the compositor asks for
        them each frame, and they change only when styles do (a style update or a theme reaches every
        node, this one too)."""
        colors = self._backgrounds
        if colors is None:
            colors = self._backgrounds = super().background_colors
        return colors

    @property
    def area(self) -> Size:
        """The content size (Widget.size), worked out again only when the widget is laid out anew
        or its styles change: Widget.size asks the screen's compositor on every call, and a tick
        asks once per line."""
        outer = self.outer_size
        if outer is not self._area_of:
            gutter = self.styles.gutter
            self._area_of = outer
            area = Size(max(0, outer.width - gutter.width), max(0, outer.height - gutter.height))
            if area.width != self._area.width:  # the kept rows are padded to the old width
                self._segs = [None] * len(self._lines)
            self._area = area
        return self._area

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = self._styles = self._area_of = self._backgrounds = self._direct_place = None
        self._segs = [None] * len(self._lines)

    def set_lines(self, lines: Sequence[Line]) -> None:
        """Show these lines; repaint only those that differ from what is shown. Runs are text,
        never markup; control characters in them (a device or wait-event name from a recording
        or a server) are shown as visible escapes."""
        old = self._lines
        if len(old) != len(lines):
            self._lines = [_printable(line) for line in lines]
            self._segs = [None] * len(lines)
            self.refresh()
            return
        width, height = self.area
        changed = []
        segs = self._segs
        for y, b in enumerate(lines):
            a = old[y]
            if a is b or a == b:
                continue
            b = _printable(b)
            if a == b:
                continue
            old[y] = b
            shown, segs[y] = segs[y], None
            now = self.content_segments(y, width) if shown is not None and y < height else None
            if shown is not None and now is not None:  # both rows as segments: what differs
                spans = changed_spans(shown, now)
            else:  # not shown as segments (not yet, or fitted by render_line), or no longer: all of it
                spans = [(0, width)]
            changed += [Region(start, y, max(1, end - start), 1) for start, end in spans]
        if changed:
            regions = merge_rows(changed)
            painting = _painting
            if painting is None or not self._is_mounted:
                self.refresh(*regions)
            else:  # what refresh() marks for a repaint; one_paint sends it
                if self in painting:
                    rows = self._rows
                else:  # the first change of this paint: anything marked before is not in these rows
                    rows = None if self._repaint_regions else []
                    painting.add(self)
                Widget._set_dirty(self, *regions)
                if rows is not None:
                    rows.extend(changed)
                self._rows = rows

    def _set_dirty(self, *regions: Region) -> None:
        """Widget._set_dirty; a repaint asked for from elsewhere (a refresh, a resize, a new style) is
        more than the rows of the paint under way: then none of this view is sent directly."""
        self._rows = None
        super()._set_dirty(*regions)

    def _content_styles(self) -> list[Style] | None:
        """Every style content_segments() puts in a row (FramedLines checks them against the app's
        line filters once per list)."""
        return self._style_list

    def _row_styles(self) -> tuple[Style, dict]:
        """The widget's style and styles_for() of it, rebuilt when either changed."""
        base = self._base
        if base is None:
            base = self._base = self.rich_style
        styles = self._styles
        if styles is None or styles[None][0] is not base:
            styles = self._styles = styles_for(base, palette_of(self.app))
            self._style_list = [style for style, _ in styles.values()]
        return base, styles

    def content_segments(self, y: int, width: int) -> list[Segment] | None:
        """Line y as segments exactly `width` cells long (padded with the widget's style), or None
        when it cannot be (characters wider than one cell, a line longer than the width, or not
        the content's width): render_line then fits it as Textual does."""
        if width != self.area.width:
            return None
        base, styles = self._row_styles()
        if y >= len(self._lines):
            return [Segment(" " * width, base)] if width else []
        segs = self._segs[y]
        if segs is None:
            segs = segments(self._lines[y], base, {}, styles)
            text = "".join([t for t, _, _ in segs])
            n = len(text)
            if n > width or (not _NARROW(text) and cell_len(text) != n):
                return None
            if n < width:
                segs.append(Segment(" " * (width - n), base))
            self._segs[y] = segs
        return segs

    def render_line(self, y: int) -> Strip:
        width = self.area.width
        segs = self.content_segments(y, width)
        if segs is not None:
            return Strip(segs, width)
        base, styles = self._row_styles()
        return Strip(segments(self._lines[y], base, {}, styles)).adjust_cell_length(width, base)


def _printable(line: Line) -> Line:
    """The line with control characters shown as visible escapes (the same object when it has none)."""
    if all(t.isprintable() for t, _ in line):
        return line
    return tuple((printable(t), style) for t, style in line)
