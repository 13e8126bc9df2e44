"""Send only the changed cells of a line to the terminal, not the line from its widget's left edge.

Textual 8 (`ChopsUpdate.render_segments`, marked "TODO: crop to x extents") writes a changed span
from the start of the widget's chop: when a chart's newest column changes, the whole chart row goes
to the terminal again, colour codes and all. `install()` swaps in the same method cropped at both
ends. What the terminal shows is the same; the bytes (and the rendering of them) are the changed
cells only, rendered straight from the segments (no cropped Strip is built). Lines holding
double-width characters keep Textual's behaviour: a cut through such a character would print half
of it as a blank.

Checked by tests/test_tui_terminal.py, which replays the updates of a live session on a small
terminal emulator and compares every cell with a full repaint.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.console import Console
from rich.control import Control
from textual.strip import Strip

_installed = False


def render_segments(self, console: Console) -> str:
    """ChopsUpdate.render_segments, cropped to each span's [x1, x2)."""
    sequences: list[str] = []
    append = sequences.append
    move_to = Control.move_to
    color_system = console._color_system or ColorSystem.TRUECOLOR
    chops = self.chops
    chop_ends = self.chop_ends
    last_y = self.spans[-1][0]
    for y, x1, x2 in self.spans:
        line = chops[y]
        for end, (x, strip) in zip(chop_ends[y], line.items()):
            if strip is None or x >= x2 or end <= x1:
                continue
            if x >= x1 and end <= x2:
                append(move_to(x, y).segment.text)
                append(strip.render(console))
                continue
            right = min(end, x2)
            left = max(x, x1)
            if len(strip.text) != strip.cell_length:  # double-width characters
                if left > x:
                    left = x  # no cut on the left (as Textual does it): half a character is a blank
                append(move_to(left, y).segment.text)
                append(strip.crop(left - x, right - x).render(console))
                continue
            append(move_to(left, y).segment.text)
            append(_render_cells(strip, left - x, right - x, color_system))
        if y != last_y:
            append("\n")
    return "".join(sequences)


def _render_cells(strip: Strip, start: int, end: int, color_system: ColorSystem) -> str:
    """Cells [start, end) of a strip of single-width characters as terminal sequences: what
    strip.crop(start, end).render() gives, without building the cropped Strip (a Strip costs
    seven caches; a tick crops dozens)."""
    out: list[str] = []
    render = Strip.render_style
    pos = 0
    for text, style, control in strip:
        n = len(text)
        if control or pos + n <= start:
            pos += n
            continue
        if pos >= end:
            break
        if pos < start or pos + n > end:
            text = text[max(0, start - pos):end - pos]
        out.append(text if style is None else render(style, text, color_system))
        pos += n
    return "".join(out)


def install() -> None:
    """Use the cropping render for partial updates (idempotent; a Textual without ChopsUpdate of
    this shape is left alone)."""
    global _installed
    if _installed:
        return
    try:
        from textual._compositor import ChopsUpdate
    except ImportError:
        return
    probe = ChopsUpdate.__init__.__code__.co_varnames
    if ("chops", "spans", "chop_ends") != probe[1:4]:
        return
    ChopsUpdate.render_segments = render_segments
    _installed = True
