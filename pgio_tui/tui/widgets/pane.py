"""Pane: what the six panes share: border title, focus, tooltip, the View they draw, their sections.

A pane draws from a View (a FrameHistory, the SessionInfo and the time window) and never from a
sampler or a recording, so live, replay and diff use the same pane classes. A pane is one widget:
it stacks named sections (text, a table, a chart) into its lines and repaints only what changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgio_tui.metrics import CATALOG, DISK_METRICS
from pgio_tui.safe_text import plain_text
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.plot import Line
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.lines import LinesView

Section = tuple[str, list[Line]]


@dataclass(frozen=True)
class View:
    history: FrameHistory
    session: SessionInfo
    t0: float
    t1: float


class Pane(LinesView, can_focus=True):
    KEY = "0"
    TITLE = "pane"
    CATALOG_PANES: tuple[str, ...] = ()  # metric catalog panes whose help is this pane's tooltip

    DEFAULT_CSS = """
    Pane {
        height: 1fr;
        border: round $foreground 25%;
        border-title-color: $foreground-muted;
        border-subtitle-color: $warning;
        padding: 0 1 0 0;
    }
    Pane:focus { border: round $primary; border-title-color: $primary; }
    """

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.border_title = f"{self.KEY} {self.TITLE}"
        self._drawn: tuple | None = None
        self._view: View | None = None
        self._sections: dict[str, tuple[int, int]] = {}

    def on_mount(self) -> None:
        super().on_mount()
        metrics = [m for m in CATALOG + DISK_METRICS if m.pane in self.CATALOG_PANES]
        if metrics:
            self.tooltip = "\n".join(f"{m.name} ({m.unit}): {m.help}" for m in metrics[:12])

    def draw(self, view: View, force: bool = False) -> None:
        """Redraw from the view unless nothing it shows has changed."""
        self._view = view
        width, height = self.size
        key = (view.history.version, view.t0, view.t1, width, height)
        if not width or not height or (not force and key == self._drawn):
            return
        self._drawn = key
        sections = self.sections(view, width, height)
        lines: list[Line] = []
        self._sections = {}
        for name, part in sections:
            self._sections[name] = (len(lines), len(lines) + len(part))
            lines.extend(part)
        self.set_lines(lines[:height])

    def on_resize(self) -> None:
        if self._view is not None:
            self.draw(self._view, force=True)

    def sections(self, view: View, width: int, height: int) -> list[Section]:
        """The pane's content as named blocks of lines, `height` lines in all (or fewer)."""
        raise NotImplementedError

    def section_text(self, name: str) -> str:
        """What a section shows now, as text (tests, and a later `copy` action)."""
        a, b = self._sections.get(name, (0, 0))
        return "\n".join("".join(t for t, _ in line) for line in self._lines[a:b])

    def set_subtitle(self, text: str) -> None:
        """The border subtitle, as plain text (it may hold a device name or a setting)."""
        if getattr(self, "_subtitle_text", None) != text:
            self._subtitle_text = text
            self.border_subtitle = plain_text(text)


def fit(head: list[Line], body_height: int) -> tuple[list[Line], int]:
    """Text above a chart: keep all of it if the chart still gets 3 rows, else trim the text."""
    room = body_height - len(head)
    if room >= 3 or not head:
        return head, max(0, room)
    keep = max(0, body_height - 3)
    return head[:keep], body_height - keep
