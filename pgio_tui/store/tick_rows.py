"""The rows one commit of a recording writes: a Frame taken apart into its tables' rows.

The Recorder (writer.py) decides when to commit; this holds what is buffered until then and the
ids of the name tables (devices, sources, wait events, statements), assigned at first sight so the
rows that use an id go into the same transaction as the row that defines it.
"""

from __future__ import annotations

import json
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.frame import IO_FIELDS, SOURCE_FIELDS, Event, Frame
from pgio_tui.secrets import scrub_secrets
from pgio_tui.secrets import scrub_value as _scrub
from pgio_tui.store import schema
from pgio_tui.store.backend_rows import BackendRows
from pgio_tui.store.schema import quantize, quote, to_stored

_SOURCE_UNIT = "1/s"


def json_text(value: Any) -> str | None:
    """A value stored as JSON (secrets scrubbed); nothing for an empty one."""
    return None if value in (None, {}, []) else json.dumps(_scrub(value), default=str)


class TickRows:
    """What the next commit writes, and the ids the rows refer to."""

    def __init__(self, columns: dict[str, str], units: dict[str, str | None], scales: dict[str, int]):
        self.columns = columns  # metric -> SQL type: the ticks table's metric columns
        self.units = units
        self.scales = scales  # metric -> scale of the columns stored as scaled whole numbers
        self._device_ids: dict[str, int] = {}
        self._device_roles: dict[str, str | None] = {}
        self._device_first: dict[str, int | None] = {}
        self._source_ids: dict[str, int] = {}
        self._io_key_ids: dict[tuple, int] = {}
        self._wait_ids: dict[tuple, int] = {}
        self._statement_ids: dict[int, int] = {}  # queryid -> statements.id
        self._backend_rows = BackendRows()  # backends and asynchronous I/O (store/backend_rows.py)
        self._ticks_sql: tuple[tuple, str] = ((), "")  # the ticks INSERT, for the columns it names
        self.clear()

    def clear(self) -> None:
        self._ticks: list[dict] = []
        self._disk: list[tuple] = []
        self._disk_flush: list[tuple] = []
        self._io: list[tuple] = []
        self._io_rows: list[tuple] = []
        self._new_io_keys: list[tuple] = []
        self._waits: list[tuple] = []
        self._events: list[tuple] = []
        self._checkpoints: list[tuple] = []
        self._latency_hist: list[tuple] = []
        self._output: list[tuple] = []
        self._new_devices: list[tuple] = []
        self._device_updates: list[tuple] = []
        self._new_sources: list[tuple] = []
        self._new_waits: list[tuple] = []
        self._new_statements: list[tuple] = []
        self._statement_texts: list[tuple] = []
        self._statement_stats: list[tuple] = []
        self._backend_rows.clear()

    def add(self, frame: Frame, events: list[Event], q: float) -> None:
        """One tick's rows; `q` is the nominal interval the rates are quantized to (one event per tick)."""
        tick = frame.tick
        row = {"tick": tick, "t": round(frame.t, 3), "elapsed": _round(frame.elapsed, 3), "dt": _round(frame.dt, 3)}
        row.update({k: to_stored(quantize(v, self.units[k], q), self.scales.get(k, 1))
                    for k, v in frame.values.items()})
        self._ticks.append(row)

        for name in {**frame.devices, **frame.device_roles}:
            self._register_device(name, frame.device_roles.get(name), tick if name in frame.devices else None)
        for name, fields in frame.devices.items():
            vals = [to_stored(quantize(fields.get(f), u, q), s)
                    for f, u, s in zip(schema.DISK_COLUMNS, schema.DISK_UNITS, schema.DISK_SCALES)]
            if not schema.all_zero(vals):
                self._disk.append((tick, self._device_ids[name], *vals))
            flush = schema.flush_counts(fields, frame.dt) if frame.dt and frame.dt > 0 else (None, None)
            if not schema.all_zero(flush):  # (None: unknown, kept so)
                self._disk_flush.append((tick, self._device_ids[name], *flush))
        for backend_type, fields in (() if frame.io else frame.sources.items()):  # else made from io_rows
            source_id = self._lookup(self._source_ids, self._new_sources, backend_type, (backend_type, tick))
            vals = [quantize(fields.get(f), _SOURCE_UNIT, q) for f in SOURCE_FIELDS]
            if not schema.all_zero(vals):
                self._io.append((tick, source_id, *vals))
        io_dt = frame.dt if frame.dt and frame.dt > 0 else 0.0
        for key, fields in frame.io.items() if io_dt else ():  # counts over the tick
            vals = schema.io_stored(fields, io_dt)
            key_id = self._lookup(self._io_key_ids, self._new_io_keys, key, (*key, tick))  # a row from now on
            if not schema.all_zero(v or 0 for v in vals):
                self._io_rows.append((tick, key_id, *vals))
        waits: dict[int, int] = {}
        for backend_type, wait_type, wait_event, count in frame.waits:
            key = (backend_type, wait_type, wait_event)
            wait_id = self._lookup(self._wait_ids, self._new_waits, key, key)
            waits[wait_id] = waits.get(wait_id, 0) + count
        self._waits.extend((tick, wait_id, count) for wait_id, count in waits.items())
        for e in events:
            self.event(e, tick, frame.t)
        self._checkpoints.extend(self._checkpoint_row(c, tick) for c in frame.checkpoints)
        self._statement_rows(frame)
        self._backend_rows.add(frame, self._register_statement)
        self._latency_hist.extend((tick, int(b), int(n)) for b, n in frame.latency_buckets.items() if n)

    def event(self, e: Event, tick: int | None, t: float) -> None:
        self._events.append((tick, round(t, 3), e.kind, scrub_secrets(e.text or ""), json_text(e.data)))

    def output(self, workload_id: int, stream: str, line: str, t: float) -> None:
        self._output.append((workload_id, round(t, 3), stream, scrub_secrets(line)))

    def statements(self) -> list[tuple[str, list[tuple]]]:
        """(SQL, rows) in the order the commit runs them: a name row before the rows that use its id."""
        columns = (*schema.TICK_COLUMNS, *self.columns)
        if self._ticks_sql[0] != columns:  # made again only when a metric column was added
            self._ticks_sql = (columns, f"INSERT INTO ticks ({', '.join(map(quote, columns))}) "
                                        f"VALUES ({', '.join('?' * len(columns))})")
        ticks = [tuple(map(r.get, columns)) for r in self._ticks]
        return [
            ("INSERT INTO devices (id, name, role, first_tick) VALUES (?, ?, ?, ?)", self._new_devices),
            ("UPDATE devices SET role = ? WHERE id = ?", [u[1:] for u in self._device_updates if u[0] == "role"]),
            ("UPDATE devices SET first_tick = ? WHERE id = ?",
             [u[1:] for u in self._device_updates if u[0] == "first_tick"]),
            (self._ticks_sql[1], ticks),
            (_insert("sources", 3), self._new_sources),
            (_insert("wait_events", 4), self._new_waits),
            (_insert("disk", 2 + len(schema.DISK_COLUMNS)), self._disk),
            (_insert("disk_flush", 4), self._disk_flush),
            (_insert("io", 2 + len(SOURCE_FIELDS)), self._io),
            (_insert("io_keys", 5), self._new_io_keys),
            (_insert("io_rows", 2 + len(IO_FIELDS)), self._io_rows),
            (_insert("waits", 3), self._waits),
            ("INSERT INTO events (tick, t, kind, text, data) VALUES (?, ?, ?, ?, ?)", self._events),
            (f"INSERT INTO checkpoints ({', '.join(schema.CHECKPOINT_COLUMNS)}, extra) "
             f"VALUES ({', '.join('?' * (len(schema.CHECKPOINT_COLUMNS) + 1))})", self._checkpoints),
            (_insert("latency_hist", 3), self._latency_hist),
            ("INSERT INTO workload_output (workload_id, t, stream, line) VALUES (?, ?, ?, ?)", self._output),
            (_insert("statements", 4), self._new_statements),
            ("UPDATE statements SET text = ? WHERE id = ?", self._statement_texts),
            (_insert("statement_stats", 2 + len(schema.STATEMENT_COLUMNS)), self._statement_stats),
            *self._backend_rows.statements(),
        ]

    def _statement_rows(self, frame: Frame) -> None:
        """Query texts once per queryid; the top statements as whole numbers over the window."""
        for queryid, text in frame.statement_texts.items():
            self._register_statement(queryid, frame.tick)
            self._statement_texts.append((text, self._statement_ids[queryid]))  # scrubbed where read
        window = frame.values.get(M.STATEMENTS_WINDOW_S)
        if not frame.statements or not window:
            return
        for row in frame.statements:
            sid = self._register_statement(row["queryid"], frame.tick)
            vals = []
            for fld, scale in schema.STATEMENT_COLUMNS.values():
                v = row.get(fld)
                per_window = fld not in ("mean_ms", "stddev_ms")
                vals.append(None if v is None else round(v * scale * (window if per_window else 1)))
            self._statement_stats.append((frame.tick, sid, *vals))

    def _register_statement(self, queryid: int, tick: int) -> int:
        sid = self._statement_ids.get(queryid)
        if sid is None:
            sid = self._statement_ids[queryid] = len(self._statement_ids) + 1
            self._new_statements.append((sid, queryid, None, tick))
        return sid

    def _register_device(self, name: str, role: str | None, first_tick: int | None) -> None:
        """Give a device its id; first_tick is the first tick with figures for it (a reader shows
        the device idle, all zeros, at later ticks without a row)."""
        if name not in self._device_ids:
            self._device_ids[name] = len(self._device_ids) + 1
            self._device_roles[name] = role
            self._device_first[name] = first_tick
            self._new_devices.append((self._device_ids[name], name, role, first_tick))
            return
        if role is not None and role != self._device_roles[name]:
            self._device_roles[name] = role
            self._device_updates.append(("role", role, self._device_ids[name]))
        if first_tick is not None and self._device_first[name] is None:
            self._device_first[name] = first_tick
            self._device_updates.append(("first_tick", first_tick, self._device_ids[name]))

    @staticmethod
    def _lookup(ids: dict, new_rows: list, key, row: tuple) -> int:
        """The id of a name row (sources, wait_events), assigned here at first sight so the rows
        that use it can go in the same transaction."""
        id_ = ids.get(key)
        if id_ is None:
            id_ = ids[key] = len(ids) + 1
            new_rows.append((id_, *row))
        return id_

    @staticmethod
    def _checkpoint_row(c: dict[str, Any], tick: int) -> tuple:
        c = {"end_tick": tick, **c}
        extra = {k: v for k, v in c.items() if k not in schema.CHECKPOINT_COLUMNS}
        return (*(c.get(k) for k in schema.CHECKPOINT_COLUMNS), json_text(extra))


def _insert(table: str, n: int) -> str:
    return f"INSERT INTO {table} VALUES ({', '.join('?' * n)})"


def _round(v: float | None, decimals: int) -> float | None:
    return None if v is None else round(v, decimals)
