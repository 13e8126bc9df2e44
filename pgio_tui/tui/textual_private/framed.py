"""FramedLines: a widget's line cache that frames a changed content row with border and padding
segments it keeps, instead of building them again for every row.

Textual's StylesCache builds each row it repaints from the styles: it looks up the border, adds
colours for both edges, pads, and applies tint and opacity; a pane repaints a few dozen rows a
tick, so that framing cost about as much as drawing the rows' content. The frame of a content row
(left border and padding, right padding and border) is the same for every row while the styles,
the colours and the size stay the same: it is taken once from a row Textual frames itself, and
reused. Anything out of the plain case (a top or bottom row, padding rows, outline, tint, hatch,
opacity, text opacity) is left to Textual.

A row is one Strip: the frame's segments around the content's (`content(y)` gives them, exactly
the content width), not a content Strip framed into a second one. The app's line filter (ANSI
colours to truecolour) then runs over every new row; when it leaves each style of the frame and of
the content as it is (a truecolour theme), the row is recorded as its own filtered form, so no
third Strip is built. What the terminal shows is the same cell for cell (tests/test_tui_framed.py
compares each row with Textual's own framing and filtering, tick after tick; the TUI snapshots
and tests/test_tui_terminal.py compare the screen).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable

from rich.segment import Segment
from rich.style import Style
from textual._styles_cache import StylesCache
from textual.filter import ANSIToTruecolor
from textual.strip import Strip

# The parameters StylesCache.render_line and .render take in the Textual this was written for:
# another signature means another Textual, whose rows are then framed by Textual alone (the
# package's guard turns the whole fast path off).
PARAMS = ("self", "styles", "y", "size", "content_size", "padding", "base_background", "background",
          "render_content_line", "border_title", "border_subtitle", "opacity", "ansi_theme", "native_ansi")
RENDER_PARAMS = ("self", "styles", "size", "base_background", "background", "render_content_line", "filters",
                 "border_title", "border_subtitle", "content_size", "padding", "crop", "opacity", "ansi_theme",
                 "native_ansi")
FITS = (tuple(inspect.signature(StylesCache.render_line).parameters) == PARAMS
        and tuple(inspect.signature(StylesCache.render).parameters) == RENDER_PARAMS)
# A row may stand for its own filtered form only where Strip.apply_filter looks in this cache first.
PREFILTER = "_filter_cache" in Strip.__slots__ and "_filter_cache" in Strip.apply_filter.__code__.co_names


def misfit() -> str | None:
    """The private part of Textual this leans on that is not as it expects, None: all is."""
    if not FITS:
        return "StylesCache.render_line"
    if not PREFILTER:
        return "Strip._filter_cache"
    return None

Content = Callable[[int, int], "list[Segment] | None"]


def frame_key(styles, size, content, padding, base_background, background, opacity) -> tuple:
    """What a content row's frame depends on: while it stays equal, the kept frame holds."""
    return (size, content, padding, base_background, background, opacity, styles.border, styles.outline,
            styles.tint, styles.text_opacity, styles.has_rule("hatch"))


class FramedLines(StylesCache):
    def __init__(self, content: Content | None = None, styles: Callable[[], Iterable[Style]] | None = None):
        """`content(y, width)`: content row y as segments exactly `width` cells, or None (then the
        widget's render_line, framed as before); `styles()`: every style those segments use."""
        super().__init__()
        self._content = content
        self._content_styles = styles
        self._frame_key: tuple | None = None
        self._frame: tuple[list, list, int] | None = None  # segments before, after, content width
        self._now: tuple | None = None  # the frame key of the render() under way, its filters, background
        self._clean: tuple | None = None  # (filters, background, frame, content styles, passes unchanged)

    def render(self, styles, size, base_background, background, render_content_line, filters, border_title,
               border_subtitle, content_size=None, padding=None, crop=None, opacity=1.0, **kw):
        """Textual's render, with what every row of this call shares worked out once."""
        content = size if content_size is None else content_size
        pad = styles.padding if padding is None else padding
        self._now = (frame_key(styles, size, content, pad, base_background, background, opacity), tuple(filters),
                     background, styles.gutter)
        try:
            return super().render(styles, size, base_background, background, render_content_line, filters,
                                  border_title, border_subtitle, content_size, padding, crop, opacity, **kw)
        finally:
            self._now = None

    def render_line(self, styles, y, size, content_size, padding, base_background, background,
                    render_content_line, border_title, border_subtitle, opacity, ansi_theme, native_ansi):
        args = (styles, y, size, content_size, padding, base_background, background, render_content_line,
                border_title, border_subtitle, opacity, ansi_theme, native_ansi)
        now = self._now
        gutter = styles.gutter if now is None else now[3]  # the same for every row of a render()
        if y < gutter.top or y >= size.height - gutter.bottom or y - gutter.top >= content_size.height:
            return super().render_line(*args)
        if now is None:  # called outside render(): work the key out here
            key = frame_key(styles, size, content_size, padding, base_background, background, opacity)
        else:
            key = now[0]
        if key != self._frame_key:
            self._frame_key, self._frame = key, self._probe(args, key)
        frame = self._frame
        if frame is None:
            return super().render_line(*args)
        before, after, content_width = frame
        segments = self._content(y - gutter.top, content_width) if self._content is not None else None
        if segments is not None:
            strip = Strip([*before, *segments, *after], size.width)
            if now is not None and PREFILTER and self._passes(now, frame):
                cache = strip._filter_cache
                for f in now[1]:
                    cache[(f, now[2])] = strip
            return strip
        line = render_content_line(y - gutter.top)
        if line.cell_length != content_width:
            return super().render_line(*args)
        return Strip([*before, *line, *after], size.width)

    def shows_content(self, widget) -> bool:
        """Whether the widget's content rows reach the screen as its content segments, unchanged:
        its rows are framed the plain way for its styles and size as they are now (as render_widget
        would frame them), and every line filter leaves each style as it is (textual_private/direct.py)."""
        styles = widget.styles
        base_background, background = widget.background_colors
        key = frame_key(styles, widget.region.size, widget.content_region.size, styles.padding, base_background,
                        background, widget.opacity)
        frame = self._frame
        if frame is None or key != self._frame_key:
            return False
        return self._passes((key, tuple(widget.get_line_filters()), background, styles.gutter), frame)

    def _passes(self, now: tuple, frame: tuple) -> bool:
        """Whether every filter of this render leaves each style of the frame and the content as it
        is: only ANSIToTruecolor is known (a style without system colours and without dim)."""
        _key, filters, background, _gutter = now
        content = self._content_styles() if self._content_styles is not None else None
        clean = self._clean
        if clean is not None and clean[0] == filters and clean[1] == background and clean[2] is frame \
                and clean[3] is content:
            return clean[4]
        ok = content is not None and all(type(f) is ANSIToTruecolor for f in filters)
        if ok:
            rich_bg = background.rich_color
            seen = [s.style for s in (*frame[0], *frame[1]) if s.style is not None]
            seen += [s for s in content if s is not None]
            ok = all(f.truecolor_style(s, rich_bg) is s for f in filters for s in seen)
        self._clean = (filters, background, frame, content, ok)
        return ok

    def _probe(self, args: tuple, key: tuple) -> tuple[list, list, int] | None:
        """The frame of a content row, from a row Textual frames around a blank: None when the
        styles are not the plain case (outline, tint, hatch, opacity, text opacity)."""
        styles, _y, size, content_size, padding, _bb, _bg, _rcl, *_rest = args
        _outline_top, outline_right, _outline_bottom, outline_left = key[7]
        if outline_left[0] or outline_right[0] or key[8].a or key[9] != 1.0 or key[10] or key[5] != 1.0:
            return None
        width = content_size.width
        marker = Strip.blank(width)
        row = super().render_line(*args[:7], lambda _y: marker, *args[8:])
        segments = list(row)
        (_t, (border_right, _c1), _b, (border_left, _c2)) = key[6]
        n_before = (1 if border_left else 0) + (1 if padding.left else 0)
        n_after = (1 if border_right else 0) + (1 if padding.right else 0)
        if len(segments) != n_before + 1 + n_after or segments[n_before].text != " " * width:
            return None  # not framed as expected: let Textual frame every row
        return segments[:n_before], segments[n_before + 1:], width
