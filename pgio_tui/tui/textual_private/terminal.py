"""Send only the changed cells of a line to the terminal, not the line from its widget's left edge.

Textual 8 (`ChopsUpdate.render_segments`, marked "TODO: crop to x extents") writes a changed span
from the start of the widget's chop: when a chart's newest column changes, the whole chart row goes
to the terminal again, colour codes and all. `install()` swaps in the same method cropped at both
ends. What the terminal shows is the same; the bytes (and the rendering of them) are the changed
cells only, rendered straight from the segments (no cropped Strip is built). Lines holding
double-width characters keep Textual's behaviour: a cut through such a character would print half
of it as a blank.

`install()` also swaps in a `render_partial_update` that renders only the widgets whose cells are
sent. Textual renders, for every partial update, each widget whose clip overlaps the union of the
changed regions (the screen and every container behind the panes, each of its lines, every tick)
and cuts its strips on every changed line, although the panes in front cover those cells. Here the
cells sent (the chops under the changed spans) are listed first; widgets are taken front to back,
each fills the listed chops it covers, and a widget that covers none of those still open is not
rendered at all (it keeps its dirty lines for a later update), and one that does renders only
its rows from the first to the last that are sent. The chop a cell gets is the one
Textual's first-come rule gives it: the front-most widget covering it.

`paint_now()` sends the changed widgets of a tick at once, in the tick (widgets/lines.py's
`one_paint`), with the steps Textual's screen takes a moment later when each widget has messaged it
(Screen._on_timer_update): the widgets' repaint regions into the compositor, then its update to the
driver. Anything else pending on the screen (a layout, a scroll, a full repaint, a batch, another
screen on top) is left to Textual's own way, which then paints these widgets too. Given `direct`
(textual_private/direct.py), the widgets it can send straight from their rows skip the compositor: their
cells go out as a DirectUpdate, after the compositor's update of the others, in one update.

`paint_pending()` sends the start-up frame when Textual's start-up batch is over, not a frame later.
Textual lays the first screen out inside that batch and sends nothing then; its screen's update timer
sends the whole frame 1/60 s after the batch, and until then the terminal shows only the widgets
repainted since (the panes, not the footer, drawn once). The app calls it on its Ready (tui/app.py):
the whole screen, through the timer's own steps, at once. tests/test_tui_first_frame.py runs it on a
pseudo-terminal at Textual's frame rate of 1 a second, both ways.

`install()` also makes an update one write to the driver: Textual writes the start of a
synchronized update, the update and its end as three writes, and each wakes its writer thread
(which may then write and flush each on its own). Joined, the terminal gets the same bytes in one
piece, and the thread wakes once a tick.

Checked by tests/test_tui_terminal.py, which replays the updates of a live session on a small
terminal emulator and compares every cell with a full repaint (full repaints are Textual's own).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from rich.color import ColorSystem
from rich.console import Console
from rich.control import Control
from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip

from textual._compositor import CompositorUpdate

_installed = False
_direct = False  # paint_now() paints in the tick (installed)
_direct_updates = False  # paint_now() sends what direct.py can straight to the terminal (installed)
# (screen, widgets, colour system) -> (terminal sequences of those it sent, the others)
Direct = Callable[[object, set, ColorSystem], "tuple[str, set]"]


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
            append(render_cells(strip, left - x, right - x, color_system))
        if y != last_y:
            append("\n")
    return "".join(sequences)


def render_cells(strip: Iterable[Segment], start: int, end: int, color_system: ColorSystem) -> str:
    """Cells [start, end) of a strip (or a list of segments) of single-width characters as terminal
    sequences, without building the cropped Strip (a Strip costs seven caches; a tick crops dozens).

    The terminal shows what strip.crop(start, end).render() gives, in fewer bytes: that writes each
    run as its whole style and a reset after it. Here a run in the style before it is written
    without either, and from one style that sets only the two colours to another such (the charts'
    dots, a pane's figures) only the colour that differs is set; anything else (attributes, a link,
    no style) starts from a reset. The cells end with a reset, as Textual's runs do."""
    out: list[str] = []
    ansi_of = Strip.render_ansi
    pos = 0
    shown = ""  # the codes in force: "" is the terminal's default (where every update's runs leave it)
    for text, style, control in strip:
        n = len(text)
        if control or not n or pos + n <= start:
            pos += n
            continue
        if pos >= end:
            break
        if pos < start or pos + n > end:
            text = text[max(0, start - pos):end - pos]
        pos += n
        if style is None or style._link:  # plain text, or a link: written whole from the default
            if shown:
                out.append("\x1b[0m")
                shown = ""
            out.append(text if style is None else Strip.render_style(style, text, color_system))
            continue
        ansi = style._ansi
        if ansi is None:
            ansi = ansi_of(style, color_system)
        if ansi != shown:
            out.append(_switch(shown, ansi))
            shown = ansi
        out.append(text)
    if shown:
        out.append("\x1b[0m")
    return "".join(out)


# An SGR that sets a foreground and a background colour and nothing else (no bold, no underline...)
_COLOURS_ONLY = re.compile(r"(3[0-79]|9[0-7]|38;5;\d+|38;2;\d+;\d+;\d+);(4[0-79]|10[0-7]|48;5;\d+|48;2;\d+;\d+;\d+)")


@lru_cache(maxsize=4096)
def _switch(shown: str, ansi: str) -> str:
    """The sequence from the codes in force to others: between two that set only the two colours,
    the colour that differs (then the look is the new codes' whole); else a reset (if anything is
    in force) and the new codes."""
    was, now = _COLOURS_ONLY.fullmatch(shown), _COLOURS_ONLY.fullmatch(ansi)
    if was and now:
        return f"\x1b[{';'.join(c for c, old in zip(now.groups(), was.groups()) if c != old)}m"
    return ("\x1b[0m" if shown else "") + (f"\x1b[{ansi}m" if ansi else "")


def render_partial_update(self):
    """Compositor.render_partial_update, rendering only the widgets whose cells are sent."""
    update_regions = self._dirty_regions.copy()
    self._dirty_regions.clear()
    if not update_regions:
        return None
    from textual._compositor import ChopsUpdate

    spans = list(self._regions_to_spans(update_regions))
    cuts = self.cuts
    chops = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
    wanted: dict[int, set[int]] = {}  # line -> the cuts of its chops under a changed span, not yet filled
    height = len(cuts)
    for y, x1, x2 in spans:
        if 0 <= y < height:
            cut_set = cuts[y]
            want = wanted.setdefault(y, set())
            for x, end in zip(cut_set, cut_set[1:]):
                if x < x2 and x1 < end:
                    want.add(x)
    remaining = sum(map(len, wanted.values()))
    for widget, (region, clip) in self.visible_widgets.items():  # front to back
        if not remaining:
            break
        x0, y0, width, h = region.intersection(clip)
        if not width or not h:
            continue
        x1 = x0 + width
        lines = [y for y in range(y0, y0 + h) if any(x0 <= c < x1 for c in wanted.get(y, ()))]
        if not lines:
            continue
        top = lines[0]  # the rows from the first to the last sent, not every row of the widget
        strips = widget.render_lines(Region(x0 - region.x, top - region.y, width, lines[-1] + 1 - top))
        for y in lines:
            want = wanted[y]
            final_cuts = [cut for cut in cuts[y] if x1 >= cut >= x0]
            line = chops[y]
            for cut, strip in zip(final_cuts, strips[y - top].divide([cut - x0 for cut in final_cuts[1:]])):
                if cut in want:
                    line[cut] = strip
                    want.discard(cut)
                    remaining -= 1
    return ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in cuts])


class DirectUpdate(CompositorUpdate):
    """An update whose cells are already terminal sequences (textual_private/direct.py), after those of the
    compositor's update of the other widgets, if any: one update, one synchronized write."""

    def __init__(self, text: str, update: CompositorUpdate | None = None):
        self.text = text
        self.update = update

    def render_segments(self, console: Console) -> str:
        if self.update is None:
            return self.text
        return self.update.render_segments(console) + self.text


def paint_now(screen, widgets: set, direct: Direct | None = None) -> None:
    """Paint these widgets' dirty regions now: the screen's update without the messages. `direct`
    turns those it can into terminal sequences itself and gives back the others."""
    app = screen.app
    if not (_direct and app.screen is screen and not app._batch_count and not app.is_inline
            and not (screen._layout_required or screen._scroll_required or screen._repaint_required
                     or screen._recompose_required)):
        screen._dirty_widgets.update(widgets)
        screen.check_idle()  # as messages.Update does: the screen's idle starts its update timer
        return
    compositor = screen._compositor
    text = ""
    if direct is not None and _direct_updates and not compositor._dirty_regions:
        text, widgets = direct(screen, widgets, app.console._color_system or ColorSystem.TRUECOLOR)
    dirty = screen._dirty_widgets
    dirty.update(widgets)
    if dirty:
        compositor.update_widgets(dirty)
    if not text:
        screen._compositor_refresh()  # render_update, to the driver, and _dirty_widgets cleared
        return
    update = compositor.render_update(screen_stack=app._background_screens) if compositor._dirty_regions else None
    app._display(screen, DirectUpdate(text, update))  # as Screen._compositor_refresh does for the top screen
    dirty.clear()


def paint_pending(screen) -> None:
    """Paint the whole screen now, as its update timer would a frame later (the start-up frame: see
    the module's docstring); Textual's way where anything holds the screen back (a batch, another
    screen on top)."""
    if _direct and screen.is_current and not screen.app._batch_count:
        screen.refresh()  # the whole screen: what the batch's frame held
        screen._on_timer_update()


def one_write(display):
    """App._display whose writes to the driver go out joined, as one write."""
    def _display(self, screen, renderable):
        driver = self._driver
        if renderable is None or driver is None or "write" in vars(driver):
            return display(self, screen, renderable)
        parts: list[str] = []
        driver.write = parts.append
        try:
            return display(self, screen, renderable)
        finally:
            del driver.write
            if parts:
                driver.write("".join(parts))
    _display.joins_writes = True
    _display.__wrapped__ = display
    return _display


# The partial update this replaces, as Textual 8 writes it (its body's names): another shape is left alone.
_PARTIAL_NAMES = ("_dirty_regions", "copy", "clear", "from_union", "intersection", "_regions_to_spans",
                  "_render_chops", "cuts", "ChopsUpdate")


def misfit() -> str | None:
    """The private part of Textual this module (and direct.py) leans on that is not as it
    expects, None: all is (installed: it was)."""
    if _installed:
        return None
    from textual.app import App
    from textual._compositor import ChopsUpdate, Compositor
    from textual.screen import Screen
    from textual.widget import Widget

    if not all(hasattr(Screen, name) for name in ("_compositor_refresh", "_on_timer_update")) or not \
            all(name in Screen._on_timer_update.__code__.co_names
                for name in ("_dirty_widgets", "update_widgets", "_compositor_refresh", "_layout_required",
                             "_scroll_required", "_repaint_required", "_recompose_required", "_batch_count")):
        return "Screen._on_timer_update"
    if ("chops", "spans", "chop_ends") != ChopsUpdate.__init__.__code__.co_varnames[1:4]:
        return "ChopsUpdate"
    display = getattr(App._display, "__wrapped__", App._display)
    if not all(name in display.__code__.co_names for name in ("CompositorUpdate", "render_segments", "_begin_update",
                                                              "_driver")):
        return "App._display"
    if not all(name in Screen._compositor_refresh.__code__.co_names
               for name in ("render_update", "_background_screens", "_display", "_dirty_widgets")):
        return "Screen._compositor_refresh"
    if not isinstance(getattr(Compositor, "visible_widgets", None), property) \
            or "_dirty_regions" not in Compositor.update_widgets.__code__.co_names:
        return "Compositor.update_widgets"
    if not callable(getattr(Strip, "render_ansi", None)) or not callable(getattr(Strip, "render_style", None)):
        return "Strip.render_ansi"
    if "_repaint_regions" not in Widget._exchange_repaint_regions.__code__.co_names:
        return "Widget._exchange_repaint_regions"
    if not all(n in Compositor.render_partial_update.__code__.co_names for n in _PARTIAL_NAMES) \
            or tuple(inspect.signature(Compositor._render_chops).parameters) != ("self", "crop", "is_rendered_line"):
        return "Compositor.render_partial_update"
    return None


def install() -> None:
    """Use the cropping render for partial updates, paint_now's direct updates, one write an update
    (idempotent). The package's guard has checked Textual's shapes (misfit) before."""
    global _installed, _direct, _direct_updates
    if _installed:
        return
    from textual.app import App
    from textual._compositor import ChopsUpdate, Compositor

    ChopsUpdate.render_segments = render_segments
    Compositor.render_partial_update = render_partial_update
    if not getattr(App._display, "joins_writes", False):
        App._display = one_write(App._display)
    _installed = _direct = _direct_updates = True
