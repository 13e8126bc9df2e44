"""FramedLines: a widget's line cache that frames a changed content row with border and padding
segments it keeps, instead of building them again for every row.

Textual's StylesCache builds each row it repaints from the styles: it looks up the border, adds
colours for both edges, pads, and applies tint and opacity; a pane repaints a few dozen rows a
tick, so that framing cost about as much as drawing the rows' content. The frame of a content row
(left border and padding, right padding and border) is the same for every row while the styles,
the colours and the size stay the same: it is taken once from a row Textual frames itself, and
reused. Anything out of the plain case (a top or bottom row, padding rows, outline, tint, hatch,
opacity, text opacity) is left to Textual. What the terminal shows is the same cell for cell (the
TUI snapshots and tests/test_tui_terminal.py compare it).
"""

from __future__ import annotations

import inspect

from textual._styles_cache import StylesCache
from textual.strip import Strip

# The parameters StylesCache.render_line takes in the Textual this was written for: another
# signature means another Textual, whose rows are then framed by Textual alone.
PARAMS = ("self", "styles", "y", "size", "content_size", "padding", "base_background", "background",
          "render_content_line", "border_title", "border_subtitle", "opacity", "ansi_theme", "native_ansi")
FITS = tuple(inspect.signature(StylesCache.render_line).parameters) == PARAMS


class FramedLines(StylesCache):
    def __init__(self) -> None:
        super().__init__()
        self._frame_key: tuple | None = None
        self._frame: tuple[list, list, int] | None = None  # segments before, after, content width

    def render_line(self, styles, y, size, content_size, padding, base_background, background,
                    render_content_line, border_title, border_subtitle, opacity, ansi_theme, native_ansi):
        args = (styles, y, size, content_size, padding, base_background, background, render_content_line,
                border_title, border_subtitle, opacity, ansi_theme, native_ansi)
        gutter = styles.gutter
        if y < gutter.top or y >= size.height - gutter.bottom or y - gutter.top >= content_size.height:
            return super().render_line(*args)
        key = (size, content_size, padding, base_background, background, opacity, styles.border, styles.outline,
               styles.tint, styles.text_opacity, styles.has_rule("hatch"))
        if key != self._frame_key:
            self._frame_key, self._frame = key, self._probe(args, key)
        if self._frame is None:
            return super().render_line(*args)
        before, after, content_width = self._frame
        line = render_content_line(y - gutter.top)
        if line.cell_length != content_width:
            return super().render_line(*args)
        return Strip([*before, *line, *after], size.width)

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
