"""StatementsScreen: the top statements of the latest statement window, sortable, with their text.

It draws from the same FrameHistory as the panes, at the monitor's position (live: now, or where
the display was paused; replay: the player's position). Query text comes from the server (or a
recording) and is shown as plain text (safe_text): never markup, control characters as escapes.
"""

from __future__ import annotations

import time

from rich.text import Text  # numbers and our own labels; server text goes through plain_text
from textual.binding import Binding
from textual.widgets import DataTable

from pgio_tui.analysis.statements import one_line as plain
from pgio_tui.safe_text import plain_text
from pgio_tui.sources.statements import STATEMENT_WINDOW_S
from pgio_tui import format as fmt
from pgio_tui.tui.screens.view_screen import TableScreen

# (field, heading, formatter, wide only): wide columns show from WIDE_AT columns on.
COLUMNS = (
    ("share", "time%", lambda v: fmt.pct(v, 100), False),
    ("calls_s", "calls/s", fmt.si, False),
    ("mean_ms", "mean ms", fmt.ms, False),
    ("stddev_ms", "stddev", fmt.ms, False),
    ("rows_s", "rows/s", fmt.si, True),
    ("hit_s", "hit/s", fmt.si, True),
    ("read_s", "read/s", fmt.si, False),
    ("dirtied_s", "dirt/s", fmt.si, False),
    ("written_s", "wr/s", fmt.si, True),
    ("read_time_ms_s", "rd ms/s", fmt.si, True),
    ("write_time_ms_s", "wr ms/s", fmt.si, True),
    ("temp_written_s", "temp/s", fmt.si, True),
    ("wal_bytes_s", "WAL B/s", fmt.si, False),
)
WIDE_AT = 120
# Sort keys, in the order `o` cycles through them: (field, name shown).
SORTS = (("time_ms_s", "time"), ("calls_s", "calls"), ("mean_ms", "mean"), ("read_s", "reads"),
         ("dirtied_s", "dirtied"), ("written_s", "written"), ("wal_bytes_s", "WAL"),
         ("read_time_ms_s", "read time"), ("temp_written_s", "temp"))


class StatementsScreen(TableScreen):
    PREFIX, DETAIL, SORTS = "stmt", "text", SORTS
    DEFAULT_CSS = "StatementsScreen .view-detail { max-height: 4; }"
    BINDINGS = [
        Binding("o", "sort", "Sort", id="statements-sort"),
        Binding("escape,S", "app.pop_screen", "Back", key_display="esc", id="statements-back"),
    ]

    @classmethod
    def over(cls, app, monitor, arg: str) -> StatementsScreen:
        return cls(app.history, app.session, at=lambda: monitor.view().t1)

    def __init__(self, history, session, at=None):
        super().__init__(at)
        self.history = history
        self.session = session

    def redraw_view(self, force: bool = False) -> None:
        """Draw the statement window at the monitor's position, when it changed."""
        entry = self.history.statements_at(self.at())
        width = self.app.size.width
        key = (id(entry[2]) if entry else None, self.sort, width >= WIDE_AT, len(self.history.statement_texts))
        if not self.changed(key, force):
            return
        field, sort_name = SORTS[self.sort]
        head = self.head()
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if entry is None:
            why = ("pg_stat_statements is not available on this server" if not self.session.pgss
                   else f"no statement window yet (the first one ends after about {STATEMENT_WINDOW_S:g} s)")
            head.update(Text(f"Statements: {why}"))
            self.detail_box().update("")
            self.rows = []
            return
        t, window, rows = entry
        total = sum(r.get("time_ms_s") or 0 for r in rows) or 1.0
        self.rows = sorted(({**r, "share": (r.get("time_ms_s") or 0) / total} for r in rows),
                            key=lambda r: -(r.get(field) or 0))
        stamp = time.strftime("%H:%M:%S", time.localtime(t))
        head.update(Text(f"Top {len(rows)} statements · {fmt.duration(window)} to {stamp} · "
                         f"sort: {sort_name} (o)"))
        wide = width >= WIDE_AT
        cols = [c for c in COLUMNS if wide or not c[3]]
        for fld, heading, _, _ in cols:
            table.add_column(Text(heading, justify="right"), key=fld, width=max(5, len(heading)))
        fixed = sum(max(5, len(h)) + 2 for _, h, _, _ in cols)
        qwidth = max(12, width - fixed - 4)
        table.add_column("query", key="query", width=qwidth)
        texts = self.history.statement_texts
        for r in self.rows:
            cells = [Text(f(r.get(fld)), justify="right") for fld, _, f, _ in cols]
            text = texts.get(r["queryid"])
            query = plain_text(plain(text, qwidth)) if text is not None else Text(f"queryid {r['queryid']}", style="dim")
            table.add_row(*cells, query, key=str(r["queryid"]))
        self.show_detail(table.cursor_row)

    def show_detail(self, index: int) -> None:
        box = self.detail_box()
        if not 0 <= index < len(self.rows):
            box.update("")
            return
        r = self.rows[index]
        text = self.history.statement_texts.get(r["queryid"])
        box.update(plain_text(f"{r['queryid']}: " + (plain(text, 400) if text is not None else "(text not read yet)")))
