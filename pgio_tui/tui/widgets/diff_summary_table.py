"""SummaryTable: the rows of `pgio-tui diff --format table`, grouped, with the noise verdict.

Cells are written by analysis.formats (the one place numbers, changes and intervals are spelled).
The verdict comes before the interval so it stays on screen at 80 columns; the unit follows the
metric's name. Moving the cursor tells the screen which row to chart (RowChosen).
"""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from pgio_tui.analysis.compare import Comparison, Row
from pgio_tui.analysis.formats import cells
from pgio_tui.tui.palette import palette_of
from pgio_tui.safe_text import plain_text as Text  # recorded names: text, not markup

COLUMNS = (("metric", "metric"), ("A", "a"), ("B", "b"), ("change", "change"), ("verdict", "verdict"),
           ("95 % interval", "interval"))
NUMBER_W = 9
FIXED_W = 3 * NUMBER_W + 7 + 2 * len(COLUMNS)  # A, B, change, verdict and every cell's padding


class SummaryTable(DataTable):
    class RowChosen(Message):
        """The cursor is on this row (None: a group's heading)."""

        def __init__(self, row: Row | None, group: str):
            super().__init__()
            self.row = row
            self.group = group

    DEFAULT_CSS = """
    SummaryTable { height: 1fr; }
    """

    def __init__(self, comparison: Comparison, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.comparison = comparison
        self.by_key: dict[str, tuple[Row | None, str]] = {}
        self._metric_w = 0

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _t: self.fill())
        self.fill()

    def on_resize(self, event) -> None:
        if self._metric_width(event.size.width) != self._metric_w:
            self.fill()

    def _metric_width(self, width: int) -> int:
        longest = max((len(r.name) + len(r.unit) + 3 for r in self.comparison.rows), default=20)
        return max(14, min(longest, (width or self.app.size.width) - FIXED_W - 2))

    def fill(self) -> None:
        """(Re)build the rows: at start, on a theme change (verdict colours) and when the metric
        column must be narrower or wider."""
        pal = palette_of(self.app)
        cursor = self.cursor_row
        self._metric_w = self._metric_width(self.size.width)
        self.clear(columns=True)
        for label, key in COLUMNS:
            width = self._metric_w if key == "metric" else (7 if key == "verdict" else (None if key == "interval"
                                                                                        else NUMBER_W))
            self.add_column(label, key=key, width=width)
        self.by_key = {}
        for group, rows in self.comparison.groups().items():
            key = f"group:{group}"
            self.by_key[key] = (None, group)
            self.add_row(Text(group, style="bold"), "", "", "", "", "", key=key)
            for i, r in enumerate(rows):
                name, unit, a, b, ch, ci, verdict = cells(r)
                metric = Text("  " + name)
                if unit:
                    metric.append(" " + unit, style=pal["muted"])
                metric.truncate(self._metric_w, overflow="ellipsis")
                strong = verdict == "changed"
                style = pal["warn"] if strong else pal["muted"]
                key = f"{group}:{i}"
                self.by_key[key] = (r, group)
                self.add_row(metric, Text(a, justify="right"), Text(b, justify="right"),
                             Text(ch, justify="right", style="bold" if strong else ""),
                             Text(verdict, style=style), Text(ci, style=pal["muted"]), key=key)
        if self.row_count:
            self.move_cursor(row=min(max(cursor, 1), self.row_count - 1))

    @property
    def current(self) -> tuple[Row | None, str]:
        if not self.row_count:
            return None, ""
        return self._row_of(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def _row_of(self, key: str | None) -> tuple[Row | None, str]:
        """(row, group) of a table row's key (None: a row without one, which fill() never adds)."""
        return (None, "") if key is None else self.by_key.get(key, (None, ""))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        row, group = self._row_of(event.row_key.value)
        self.post_message(self.RowChosen(row, group))
