"""framed.py: every row a pane shows, framed and filtered our way (one Strip a row, the ANSI filter
skipped where it changes no style), is cell for cell the row Textual's own StylesCache builds from
the same widget, tick after tick, focused or not, on a truecolour theme and on an ANSI one."""

from __future__ import annotations

import pytest
from fixture_recording import synthetic_frames
from textual._styles_cache import StylesCache
from textual.theme import Theme

from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.textual_private import framed
from pgio_tui.tui.widgets.lines import LinesView

pytestmark = pytest.mark.asyncio


def cells(strips) -> list[list[tuple[str, object]]]:
    """Each row as (character, style) per cell."""
    return [[(ch, seg.style) for seg in strip for ch in seg.text] for strip in strips]


def compare(app) -> int:
    """Render every visible LinesView both ways; the number of rows compared."""
    n = 0
    for view in app.screen.query(LinesView):
        if not view.display or not view.region:
            continue
        crop = view.region.reset_offset
        ours = framed.FramedLines(view.content_segments, view._content_styles).render_widget(view, crop)
        theirs = StylesCache().render_widget(view, crop)
        assert cells(ours) == cells(theirs), type(view).__name__
        n += len(ours)
    return n


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_rows_are_textuals_rows(size):
    assert framed.FITS and framed.PREFILTER  # else Textual frames every row and there is nothing to check
    frames = list(synthetic_frames(380, incidents=True))
    app = MonitorApp(SessionInfo(host="h", server_version="17.2"), frames=frames[:300], theme="pgio-dark")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        rows = 0
        for k, f in enumerate(frames[300:]):
            app.history.push(f)
            app.request_redraw(now=True)
            await pilot.pause()
            if k == 20:
                app.screen.panes[1].focus()  # another border colour
                await pilot.pause()
            if k == 50:  # ANSI colours: the filter really changes these styles
                app.register_theme(Theme(name="ansi-charts", primary="#0178D4", dark=True, variables={
                    "chart-1": "ansi_red", "chart-2": "ansi_bright_green", "chart-3": "ansi_blue",
                    "ckpt-span": "ansi_yellow"}))
                app.theme = "ansi-charts"
                await pilot.pause()
                assert any(not view._styles_cache._clean[4] for view in app.screen.query(LinesView)
                           if view.display and view._styles_cache._clean)
            if k % 4 == 0:
                rows += compare(app)
        assert rows > 300


async def test_text_taken_as_one_cell_a_character_is_what_rich_measures():
    """content_segments takes the width of text lines._NARROW matches as its length (no per-character
    lookup): every character it matches is one cell by rich's own measure, and a wide or combining
    character is not matched."""
    from rich.cells import cell_len

    from pgio_tui.tui.widgets.lines import _NARROW

    assert [hex(cp) for cp in range(0x30000) if _NARROW(chr(cp)) and cell_len(chr(cp)) != 1] == []
    assert _NARROW("r/s ⣿⡇▲╳◆▶■│┤ 12.5 ms") and not _NARROW("日本") and not _NARROW("e\u0301") \
        and not _NARROW("\u25fd") and _NARROW("Σ ↑ ⧗ … ≥")
