"""A pytest plugin that dumps, for every snapshot a test takes, what each cell of the screen looks
like: its character, its background, and its foreground and boldness only where they show (not on
a blank). Two trees' dumps compare pixels, where the SVG files also differ in how runs are grouped.

    python -m pytest -p screen_cells tests/test_tui_snapshots.py   # with scripts/ on PYTHONPATH
    SCREEN_CELLS_DIR=/tmp/cells-after ...; then diff -r /tmp/cells-before /tmp/cells-after
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.app import App

_export = App.export_screenshot


def _cells(app: App) -> list[str]:
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    out = []
    for line in update.strips:
        cells = []
        for strip in line:
            for seg in strip:
                if seg.control:
                    continue
                st = seg.style
                for ch in seg.text:
                    if st is None:
                        cells.append(repr(ch))
                        continue
                    bg = st.bgcolor.get_truecolor() if st.bgcolor else None
                    fg = st.color.get_truecolor() if st.color else None
                    if st.reverse:
                        fg, bg = bg, fg
                    shows = bool(not ch.isspace() or st.underline or st.strike)
                    cells.append(repr((ch, tuple(bg) if bg else None, tuple(fg) if fg and shows else None,
                                       bool(st.bold) and shows, bool(st.italic) and shows,
                                       bool(st.underline), bool(st.strike), bool(st.dim) and shows)))
        out.append(" ".join(cells))
    return out


def export_screenshot(self, *args, **kwargs):
    folder = Path(os.environ.get("SCREEN_CELLS_DIR", "/tmp/screen-cells"))
    folder.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.\[\]-]+", "_", os.environ.get("PYTEST_CURRENT_TEST", "app").split(" ")[0])
    (folder / f"{name}.cells").write_text("\n".join(_cells(self)) + "\n")
    return _export(self, *args, **kwargs)


App.export_screenshot = export_screenshot
