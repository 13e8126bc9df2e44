"""BackendsScreen (B): per backend, who it is, what it waits on and its I/O, iotop style, and
asynchronous I/O in flight (18).

It draws from the same FrameHistory as the panes, at the monitor's position (live: now, or where
the display was paused; replay: the player's position). Application and database names, states,
wait events and query text come from the server (or a recording): plain text only (safe_text).
"""

from __future__ import annotations

import time

from rich.text import Text  # numbers and our own labels; server text goes through plain_text
from textual.binding import Binding
from textual.widgets import DataTable

from pgio_tui import format as fmt
from pgio_tui.analysis.statements import one_line as plain
from pgio_tui.frame import BACKENDS_TOP
from pgio_tui.safe_text import plain_text
from pgio_tui.sources.backends import io_key
from pgio_tui.sources.pg_counters import wait_name
from pgio_tui.tui.screens.view_screen import TableScreen
from pgio_tui.tui.widgets.waits_pane import SHORT

STATES = {"active": "active", "idle": "idle", "idle in transaction": "idle tx",
          "idle in transaction (aborted)": "idle tx!", "fastpath function call": "fastpath", "disabled": "disabled"}
PROC = ("read_bytes_s", "write_bytes_s")  # /proc/<pid>/io
PG = ("pg_read_bytes_s", "pg_write_bytes_s")  # 18: pg_stat_get_backend_io
# key -> (heading, width); which I/O columns show is chosen per tick (see _columns).
COLUMNS = {
    "pid": ("pid", 6), "type": ("type", 7), "state": ("state", 7), "wait": ("wait event", 17),
    "read_bytes_s": ("rd B/s", 6), "write_bytes_s": ("wr B/s", 6),
    "pg_read_bytes_s": ("pg rd/s", 7), "pg_write_bytes_s": ("pg wr/s", 7),
    "age": ("query", 6), "database": ("db", 10),
}
WIDE_AT = 120
WIDE_WAIT = 30  # the wait event column from WIDE_AT columns up: "Activity:BgWriterHibernate" whole
# Sort keys, in the order `o` cycles through them: (key, name shown).
SORTS = (("io", "I/O"), ("read_bytes_s", "read"), ("write_bytes_s", "write"), ("pg_read_bytes_s", "pg read"),
         ("pg_write_bytes_s", "pg write"), ("age", "query age"), ("pid", "pid"))


def _age(b: dict, t: float) -> float | None:
    start = b.get("query_start")
    return None if start is None or b.get("state") != "active" else max(0.0, t - start)


def sort_value(b: dict, key: str, t: float) -> float:
    if key == "io":
        return io_key(b)
    if key == "age":
        return _age(b, t) or -1.0
    if key == "pid":
        return -(b.get("pid") or 0)  # ascending
    return v if (v := b.get(key)) is not None else -1.0


def aio_line(aio: list[tuple[str, str, int]] | None, settings: dict[str, str]) -> str:
    """AIO in flight by state and operation, with io_method and io_workers (18+)."""
    method = settings.get("io_method")
    if method is None:
        return "AIO: PostgreSQL 18+ (pg_aios, io_method)"
    head = f"AIO io_method {method}" + (f", {settings['io_workers']} io workers" if method == "worker"
                                        and "io_workers" in settings else "")
    if not aio:
        return f"{head}: none in flight"
    by_state: dict[str, list[str]] = {}
    for state, op, n in aio:
        by_state.setdefault(state, []).append(f"{op} {n}")
    parts = " · ".join(f"{state} {', '.join(ops)}" for state, ops in by_state.items())
    return f"{head}: {sum(n for _, _, n in aio)} in flight · {parts}"


class BackendsScreen(TableScreen):
    PREFIX, SORTS = "bk", SORTS
    BINDINGS = [
        Binding("o", "sort", "Sort", id="backends-sort"),
        Binding("escape,B", "app.pop_screen", "Back", key_display="esc", id="backends-back"),
    ]

    @classmethod
    def over(cls, app, monitor, arg: str) -> BackendsScreen:
        return cls(app.history, app.session, at=lambda: monitor.view().t1)

    def __init__(self, history, session, at=None):
        super().__init__(at)
        self.history = history
        self.session = session
        self._aio: list = []

    def _why_no_io(self) -> str | None:
        note = self.session.note("/proc/<pid>/io")
        if note is None:
            return None
        return "read/write B/s: run pgio-tui as root on the DB host" if "root" in note \
            else "read/write B/s: only on the database host"

    def _columns(self, rows: list[dict], wide: bool) -> list[str]:
        have = {f for f in (*PROC, *PG) if any(r.get(f) is not None for r in rows)}
        io = [f for f in PROC if f in have or not have & set(PG)]  # /proc first, or its empty columns
        if wide or not set(io) & have:
            io += [f for f in PG if f in have]
        cols = ["pid", "type", "state", "wait", *io, "age"]
        return cols + (["database"] if wide else [])

    def redraw_view(self, force: bool = False) -> None:
        """Draw the backends at the monitor's position, when they changed."""
        entry = self.history.backends_at(self.at())
        width = self.app.size.width
        wide = width >= WIDE_AT
        key = (id(entry[1]) if entry else None, self.sort, wide, width, len(self.history.statement_texts))
        if not self.changed(key, force):
            return
        head = self.head()
        table = self.query_one(DataTable)
        table.clear(columns=True)
        if entry is None:
            head.update(Text("Backends: none seen yet (the second tick gives rates)"))
            self.rows, self._aio = [], []
            self.show_detail(0)
            return
        t, rows, self._aio = entry
        field, sort_name = SORTS[self.sort]
        self.rows = sorted(rows, key=lambda b: -sort_value(b, field, t))
        stamp = time.strftime("%H:%M:%S", time.localtime(t))
        which = f"top {BACKENDS_TOP} with I/O (recorded)" if self.session.source == "replay" else f"{len(rows)} listed"
        why = self._why_no_io()
        head.update(Text(f"Backends by I/O · {which} · {stamp} · sort: {sort_name} (o)" + (f" · {why}" if why else "")))
        cols = self._columns(rows, wide)
        widths = {c: WIDE_WAIT if wide and c == "wait" else COLUMNS[c][1] for c in cols}
        fixed = sum(w + 2 for w in widths.values())
        app_w = max(6, width - fixed - 6)  # cell padding, the scroll bar
        for c in cols:
            right = c in (*PROC, *PG, "age", "pid")
            table.add_column(Text(COLUMNS[c][0], justify="right" if right else "left"), key=c, width=widths[c])
        table.add_column("app" if app_w < 12 else "application", key="application", width=app_w)
        for b in self.rows:
            table.add_row(*(self._cell(b, c, t, widths[c]) for c in cols),
                          plain_text(plain(b.get("application") or "", app_w)),
                          key=f"{b.get('pid')}")
        self.show_detail(table.cursor_row)

    @staticmethod
    def _cell(b: dict, c: str, t: float, width: int) -> Text:
        if c == "pid":
            return Text(str(b.get("pid")), justify="right")
        if c == "type":
            bt = b.get("backend_type") or "?"
            return plain_text(plain(SHORT.get(bt, bt), 7))
        if c == "state":
            state = b.get("state")
            return plain_text(STATES.get(state or "", plain(state or "", 7)))
        if c == "wait":
            if b.get("wait_event") is None and b.get("state") != "active":
                return Text("")
            return plain_text(plain(wait_name(b.get("wait_event_type"), b.get("wait_event")), width))
        if c == "age":
            age = _age(b, t)
            shown = "" if age is None else fmt.duration(age) if age >= 1 else f"{fmt.ms(age * 1000)}ms"
            return Text(shown, justify="right")
        if c == "database":
            return plain_text(plain(b.get("database") or "", 10))
        return Text(fmt.si(b.get(c)), justify="right")

    def show_detail(self, index: int) -> None:
        box = self.detail_box()
        lines = []
        if 0 <= index < len(self.rows):
            b = self.rows[index]
            who = " · ".join(x for x in (f"pid {b.get('pid')}", plain(b.get("backend_type") or ""),
                                         b.get("application") and "app " + plain(b["application"], 60),
                                         b.get("database") and "db " + plain(b["database"], 60)) if x)
            q = b.get("query_id")
            text = self.history.statement_texts.get(q) if q else None
            query = plain(text, 300) if text is not None else (f"query_id {q} (text not read)" if q else "")
            lines.append(who + (f" · {query}" if query else ""))
        lines.append(aio_line(self._aio, self.session.settings))
        box.update(Text("\n").join(plain_text(line) for line in lines))
