"""The screens over the monitor's history (Statements S, Backends B, Checkpoints H, WAL W, Reads R).

Each draws what the history holds at the monitor's position (live: now, or where the display was
paused; replay: the player's position). The app calls `redraw_view()` each tick on the one on top;
`force` redraws after a resize or a new sort even when the data did not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Static


class ViewScreen(Screen):
    """An extra view (tui/views.py lists them, with their keys)."""

    extra_view = None  # the ExtraView it was opened as (the app's toggle looks at it)

    @classmethod
    def over(cls, app, monitor, arg: str) -> ViewScreen:
        """The view over the monitor's position: `app` holds the history and the session, `arg`
        is the views.py entry's."""
        raise NotImplementedError

    def on_mount(self) -> None:
        self.redraw_view(force=True)

    def on_resize(self, _event) -> None:
        self.call_after_refresh(self.redraw_view, True)

    def redraw_view(self, force: bool = False) -> None:
        raise NotImplementedError


class TableScreen(ViewScreen):
    """A head line, a table and, under it, the highlighted row in full; `o` cycles SORTS.

    Widget ids are PREFIX-head, PREFIX-table and PREFIX-DETAIL. Subclasses fill the table in
    `redraw_view` (keeping `rows`, the table's rows in order) and the detail box in `show_detail`."""

    PREFIX = ""
    DETAIL = "detail"
    SORTS: tuple[tuple[str, str], ...] = ()  # (field, name shown)
    DEFAULT_CSS = """
    TableScreen { layout: vertical; }
    TableScreen .view-head { height: 1; padding: 0 1; background: $panel; }
    TableScreen DataTable { height: 1fr; }
    TableScreen .view-detail { height: auto; max-height: 5; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, at: Callable[[], float | None] | None = None):
        super().__init__()
        self.at = at or (lambda: None)  # the monitor's position (None: the newest tick)
        self.sort = 0
        self.rows: list[dict] = []
        self._shown: tuple | None = None  # what was drawn last: redraw only when it changes

    def compose(self) -> ComposeResult:
        yield Static(id=f"{self.PREFIX}-head", classes="view-head")
        yield DataTable(id=f"{self.PREFIX}-table", cursor_type="row", zebra_stripes=True)
        yield Static(id=f"{self.PREFIX}-{self.DETAIL}", classes="view-detail")
        yield from self.below()
        yield Footer()

    def below(self) -> Iterable[Widget]:
        """Widgets between the detail box and the footer."""
        return ()

    def changed(self, key: tuple, force: bool) -> bool:
        """Whether to draw: `key` says what would be drawn."""
        if key == self._shown and not force:
            return False
        self._shown = key
        return True

    def head(self) -> Static:
        return self.query_one(f"#{self.PREFIX}-head", Static)

    def detail_box(self) -> Static:
        return self.query_one(f"#{self.PREFIX}-{self.DETAIL}", Static)

    def action_sort(self) -> None:
        self.sort = (self.sort + 1) % max(1, len(self.SORTS))
        self.redraw_view(force=True)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.cursor_row)

    def show_detail(self, index: int) -> None:
        raise NotImplementedError
