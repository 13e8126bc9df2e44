"""A view's changed rows straight to terminal bytes, without the compositor.

Textual paints a changed row by taking the widget's repaint regions into the compositor, cutting
every screen line they cross into chops, rendering the widget's rows as Strips (framed with border
and padding, run through the app's line filters), dividing those at the cuts and rendering the chops
under the changed spans. For a LinesView whose content region is wholly on screen with no widget in
front of it, whose rows are framed the plain way (framed.FramedLines) and whose styles every filter
leaves as they are, that comes to: the view's own content segments, cropped to the changed cells, at
the screen position of its content. `render()` writes those; a view out of that case is left to
Textual (terminal.paint_now), in the same update.

Textual's state is left as a paint leaves it, or lazier: the view's repaint regions are taken, as
the compositor takes them; its line cache keeps the rows marked dirty (the mark LinesView.set_lines
made), so the next render of those rows (a repaint under a closing dialog or toast, a resize, a
theme) builds them again from the content instead of from a cached Strip.

Where a view stands and whether it is in front is worked out once per layout (the compositor's
`visible_widgets`, a new dict after every reflow) and style (LinesView drops it on a style update).
tests/test_tui_terminal.py replays every tick on a terminal emulator against Textual's full repaint.
"""

from __future__ import annotations

from textual.geometry import Region

from pgio_tui.tui.textual_private.terminal import render_cells
from pgio_tui.tui.textual_private import framed

sent = {"direct": 0, "textual": 0}  # views painted each way since start (tests, bench)


def _place(view, visible: dict, screen: Region) -> Region | None:
    """The view's content region on screen when its content rows can be sent directly, else None."""
    cache = view._styles_cache
    got = visible.get(view)
    if got is None or not isinstance(cache, framed.FramedLines) or not cache.shows_content(view):
        return None
    region, clip = got
    gutter = view.styles.gutter
    width, height = view.area
    content = Region(region.x + gutter.left, region.y + gutter.top, width, height)
    if not content or not clip.contains_region(content) or not screen.contains_region(content):
        return None
    for other, (r, c) in visible.items():  # front to back: what comes before the view is in front of it
        if other is view:
            return content
        if r.intersection(c).overlaps(content):
            return None
    return None


def render(screen, views: set, color_system) -> tuple[str, set]:
    """The terminal sequences of the views that can be sent directly, and the views that cannot
    (Textual paints those: their rows are marked for it)."""
    compositor = screen._compositor
    visible = compositor.visible_widgets
    screen_region = compositor.size.region
    filters = None
    out: list[str] = []
    rest = set()
    dirty = screen._dirty_widgets
    for view in views:
        rows, view._rows = view._rows, None
        if not rows or view in dirty:
            rest.add(view)
            continue
        if view._base is None:  # the styles changed: as they are now (the place is then looked at again)
            view._row_styles()
        if filters is None:
            filters = tuple(screen.app.get_line_filters())
        cache = view._styles_cache
        place = view._direct_place
        if (place is None or place[0] is not visible or place[1] is not view._base
                or place[2] is not getattr(cache, "_frame", None) or place[3] is not getattr(cache, "_clean", None)
                or place[4] != filters):
            content = _place(view, visible, screen_region)
            # what it held for (shows_content() may have settled the filters' verdict anew)
            place = view._direct_place = (visible, view._base, getattr(cache, "_frame", None),
                                          getattr(cache, "_clean", None), filters, content)
        content = place[5]
        if content is None:
            rest.add(view)
            continue
        x0, y0, width, height = content
        part: list[str] = []
        kept = view._segs  # the rows' segments, built when set_lines compared them
        for r in rows:
            y, x1 = r.y, r.x
            x2 = min(width, x1 + r.width)
            if y >= height or x1 >= x2:
                continue  # outside the content region: clipped, as the compositor clips it
            segs = kept[y] if y < len(kept) else None
            if segs is None:
                segs = view.content_segments(y, width)
                if segs is None:  # not one cell a character: Textual fits the row
                    part = None
                    break
            part.append(f"\x1b[{y0 + y + 1};{x0 + x1 + 1}H")
            part.append(render_cells(segs, x1, x2, color_system))
        if part is None:
            rest.add(view)
            continue
        view._repaint_regions.clear()  # taken, as the compositor's update_widgets takes them
        out += part
    sent["direct"] += len(views) - len(rest)
    sent["textual"] += len(rest)
    return "".join(out), rest
