"""Backends and asynchronous I/O of a Frame as recording rows (the writer's part), and back (the reader's).

Kept compact (schema.BACKENDS_DDL): per tick only the BACKENDS_TOP backends with any I/O, what a
backend is and its state and wait stored once per combination and referred to by id, byte counts as whole numbers over
the tick, and pg_aios rows only while handles are in use.
"""

from __future__ import annotations

from typing import Any, Callable

from pgio_tui.frame import BACKENDS_TOP, Frame
from pgio_tui.secrets import scrub_secrets
from pgio_tui.sources.backends import io_key, recorded
from pgio_tui.store import schema
from pgio_tui.store.validate import label_text, number, tick_number

_LABELS = ("pid", "backend_type", "application", "database", "state", "wait_event_type", "wait_event")


def _insert(table: str, n: int) -> str:
    return f"INSERT INTO {table} VALUES ({', '.join('?' * n)})"


class BackendRows:
    """Buffers a recording's backend and AIO rows between commits; ids live as long as the file."""

    def __init__(self):
        self._backend_ids: dict[tuple, int] = {}
        self.clear()

    def clear(self) -> None:
        self._new_backends: list[tuple] = []
        self._io: list[tuple] = []
        self._aio: list[tuple] = []

    def add(self, frame: Frame, statement_id: Callable[[int, int], int]) -> None:
        """Buffer a frame's rows; `statement_id(queryid, tick)` gives (or makes) a statements row."""
        tick, dt = frame.tick, frame.dt or 0.0
        for b in recorded(frame.backends, BACKENDS_TOP) if dt else ():
            labels = tuple(b.get(k) for k in _LABELS)
            bid = self._backend_ids.get(labels)
            if bid is None:
                bid = self._backend_ids[labels] = len(self._backend_ids) + 1
                app = b.get("application")
                self._new_backends.append((bid, *labels[:2], None if app is None else scrub_secrets(app),
                                           *labels[3:], tick))
            start = b.get("query_start")
            age = None if start is None else round((frame.t - start) * 1000)
            stmt = statement_id(b["query_id"], tick) if b.get("query_id") else None
            counts = [schema.over_tick(b.get(f), dt) for f in schema.BACKEND_IO_COLUMNS.values()]
            self._io.append((tick, bid, age, stmt, *counts))
        self._aio.extend((tick, st, op, n) for st, op, n in frame.aio if n)

    def statements(self) -> list[tuple[str, list[tuple]]]:
        """(SQL, rows) pairs for the writer's commit, in an order that keeps references valid."""
        return [
            (_insert("backends", 2 + len(_LABELS)), self._new_backends),
            (_insert("backend_io", 4 + len(schema.BACKEND_IO_COLUMNS)), self._io),
            (_insert("aio", 4), self._aio),
        ]


class StoredBackends:
    """The reader's side: a file's backends by id, and a tick's rows back to Frame fields."""

    def __init__(self, conn, has_tables: bool):
        self.present = has_tables
        self.backends: dict[int, dict[str, Any]] = {}
        if not has_tables:
            return
        for id_, pid, *labels in conn.execute(f"SELECT id, {', '.join(_LABELS)} FROM backends"):
            self.backends[id_] = {"pid": tick_number(pid), **dict(zip(_LABELS[1:], (label_text(v) for v in labels)))}

    def select(self) -> tuple[str, str]:
        """The by-tick queries (backend_io, aio) for ticks BETWEEN ? AND ?."""
        cols = ", ".join(schema.BACKEND_IO_COLUMNS)
        return (f"SELECT tick, backend_id, query_age_ms, statement_id, {cols} FROM backend_io "
                "WHERE tick BETWEEN ? AND ?", "SELECT tick, state, operation, count FROM aio WHERE tick BETWEEN ? AND ?")

    def fields(self, t: float, dt: float | None, io_rows, aio_rows, statements: dict) -> dict[str, Any]:
        """A tick's stored rows back to Frame.backends (rates over dt, most I/O first) and Frame.aio."""
        out: dict[str, Any] = {}
        backends = []
        for bid, age, stmt, *counts in io_rows or ():
            who = self.backends.get(bid)
            if who is None or who["pid"] is None:
                continue  # a row without its backend: not a measurement
            b = dict(who)
            age = number(age)
            b["query_start"] = None if age is None else t - age / 1000
            b["query_id"] = statements.get(stmt, (None, None))[0] if stmt is not None else None
            for fld, c in zip(schema.BACKEND_IO_COLUMNS.values(), counts):
                c = number(c)
                b[fld] = None if c is None or not dt or dt <= 0 else c / dt
            backends.append(b)
        if backends:
            out["backends"] = sorted(backends, key=lambda b: -io_key(b))
        aio = [(label_text(st) or "?", label_text(op) or "?", n) for st, op, n in aio_rows or ()
               if type(n) is int and 0 < n <= 1 << 31]
        if aio:
            out["aio"] = aio
        return out
