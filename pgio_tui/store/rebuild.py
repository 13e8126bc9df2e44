"""Frames rebuilt from one batch of stored ticks, so a replayed Frame looks like the live one.

Idle devices and sources are not stored: they come back here as rows of zeros from the first tick
they were seen. Every stored value passes through the untrusted-row decoders (stored_rows, validate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields as dataclass_fields
from itertools import chain
from typing import Any, NamedTuple

from pgio_tui import metrics as M
from pgio_tui.frame import DEVICE_FIELDS, IO_FIELDS, SOURCE_FIELDS, Frame, relation_sums
from pgio_tui.store import schema
from pgio_tui.store.backend_rows import StoredBackends
from pgio_tui.store.stored_rows import checkpoint_row, statement_fields, stored_event
from pgio_tui.store.validate import HIST_ROWS, TEXT_TYPES, all_numbers, label_text, number, value

_WINDOW = M.STATEMENTS_WINDOW_S


def rebuild_frames(conn, ticks: list[tuple], columns: list[str], types: list[str], span: tuple[int, int], *,
                   devices: dict, sources: dict, wait_events: dict, statements: dict,
                   latency_hist: bool, backends: StoredBackends | None = None,
                   disk_flush: bool = True, scales: list[int] | None = None, io_keys: dict | None = None,
                   disk_layout: tuple = schema.disk_layout(schema.DISK_STORED),
                   io_layout: schema.IoLayout = schema.IO_COUNTS,
                   flush_layout: tuple[str, str] = schema.FLUSH_COUNTS, deferred: bool = False) -> Iterator[Frame]:
    """The Frames of `ticks` (rows of tick, t, elapsed, dt, *columns) whose ticks lie in `span`;
    devices, sources, wait_events and statements are the file's name tables (Recording), backends
    its backends (store/backend_rows.py); latency_hist and disk_flush say whether the file has
    those tables (added later), io_keys the pg_stat_io rows' (key, first tick) by id (None: a file
    without io_rows); scales are the columns' (schema.from_stored), disk_layout, io_layout and
    flush_layout the disk, io_rows and disk_flush tables' (schema.disk_layout, io_layout, flush_layout).
    `deferred`: DeferredFrames, whose pg_stat_io rows, statements and backends are decoded when read."""

    def by_tick(sql: str, numeric: bool = False) -> dict[int, list[tuple]]:
        return _grouped(conn.execute(sql, span).fetchall(), numeric)

    def by_tick_later(sql: str, numeric: bool = False) -> _ByTick:
        """by_tick() of the deferred parts' tables: fetched now (a damaged file fails at the move,
        which ends replay with its line), grouped and tested when a Frame first decodes them."""
        return _ByTick(conn.execute(sql, span).fetchall(), numeric)

    disk = by_tick(f"SELECT tick, device_id, {', '.join(c for _, c, _ in disk_layout)} FROM disk "
                   "WHERE tick BETWEEN ? AND ?", numeric=True)
    disk_scales = [s for _, _, s in disk_layout]
    scales = scales or [1] * len(columns)
    flush_cols = ", ".join(schema.flush_expr(x, "f", flush_layout) for x in schema.FLUSH_FIELDS)
    flush = by_tick(f"SELECT f.tick, f.device_id, {flush_cols} FROM disk_flush f JOIN ticks ON ticks.tick = f.tick "
                    "WHERE f.tick BETWEEN ? AND ?", numeric=True) if disk_flush else {}
    io = by_tick_later(f"SELECT tick, source_id, {', '.join(SOURCE_FIELDS)} FROM io WHERE tick BETWEEN ? AND ?")
    io_rows: _ByTick | dict = by_tick_later(
        f"SELECT tick, key_id, {', '.join(io_layout.columns)} FROM io_rows WHERE tick BETWEEN ? AND ?",
        numeric=True) if io_keys else {}
    waits = by_tick("SELECT tick, wait_id, count FROM waits WHERE tick BETWEEN ? AND ?")
    events = by_tick("SELECT tick, kind, text, data FROM events WHERE tick BETWEEN ? AND ? ORDER BY id")
    hist = by_tick(f"SELECT tick, bucket, count FROM latency_hist WHERE tick BETWEEN ? AND ? AND {HIST_ROWS}") \
        if latency_hist else {}
    cps = by_tick(f"SELECT end_tick, {', '.join(schema.CHECKPOINT_COLUMNS)}, extra FROM checkpoints "
                  "WHERE end_tick BETWEEN ? AND ? ORDER BY id")
    stmts = by_tick_later(f"SELECT tick, statement_id, {', '.join(schema.STATEMENT_COLUMNS)} FROM statement_stats "
                          "WHERE tick BETWEEN ? AND ?")
    present = backends if backends is not None and backends.present else None
    backend_sql, aio_sql = present.select() if present else ("", "")
    backend_io: _ByTick | dict = by_tick_later(backend_sql) if present else {}
    aio: _ByTick | dict = by_tick_later(aio_sql) if present else {}
    device_names = {id_: name for name, (id_, _, _) in devices.items()}
    roles = {name: role for name, (_, role, _) in devices.items() if role is not None}
    zero_dev: dict[str, float | None] = dict.fromkeys(  # no table: unknown
        DEVICE_FIELDS if disk_flush else schema.DISK_COLUMNS, 0.0)
    device_tables = ((disk, schema.DISK_COLUMNS, disk_scales),
                     (flush, schema.FLUSH_FIELDS, (1,) * len(schema.FLUSH_FIELDS)))
    decode_values = _values_decoder(columns, types, scales)
    parts = _Parts(sources, io_keys or {}, io_layout, statements, present,
                   tables=(io, io_rows, stmts, backend_io, aio))
    make = DeferredFrame if deferred else Frame
    for row in ticks:
        tick = row[0]
        tick_devices = {name: dict(zero_dev) for name, (_, _, first) in devices.items() if first <= tick}
        for table, fields, div in device_tables:
            for id_, *vals in table.get(tick, ()):
                if id_ in device_names:
                    dev_row = tick_devices.setdefault(device_names[id_], dict(zero_dev))
                    dev_row.update({f: schema.from_stored(v, s) or 0.0 for f, v, s in zip(fields, vals, div)})
        dt = number(row[3])
        frame = make(
            tick=tick, t=row[1], elapsed=number(row[2]) or 0.0, dt=dt,  # elapsed NULL: crafted
            values=decode_values(row[4:]),
            devices=tick_devices,
            device_roles=dict(roles),
            waits=[(*wait_events[id_], number(n)) for id_, n in waits.get(tick, ())
                   if id_ in wait_events and number(n) is not None],
            events=[stored_event(k, body, d) for k, body, d in events.get(tick, ())],
            checkpoints=[checkpoint_row(c) for c in cps.get(tick, ())],
            latency_buckets={b: n for b, n in hist.get(tick, ()) if isinstance(b, int) and isinstance(n, int)},
        )
        stored = _Stored(tick, row[1], dt, number(row[4 + columns.index(_WINDOW)]) if _WINDOW in columns else None)
        if isinstance(frame, DeferredFrame):
            frame.defer(parts, stored)
        else:
            for group in _GROUPS:
                getattr(parts, group)(frame, stored)
        yield frame


def _grouped(rows: list[tuple], numeric: bool) -> dict[int, list[tuple]]:
    """Rows by tick; `numeric`: the values after (tick, id) as number() reads them, the whole
    fetch tested at once (all_numbers) and only a fetch that fails decoded value by value."""
    if numeric and not all_numbers(list(chain.from_iterable(rows))):
        rows = [(*row[:2], *map(number, row[2:])) for row in rows]
    out: dict[int, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[0], []).append(row[1:])
    return out


class _ByTick:
    """One fetch's rows by tick (_grouped), grouped when first asked for."""

    __slots__ = ("_rows", "_numeric", "_by_tick")

    def __init__(self, rows: list[tuple], numeric: bool):
        self._rows, self._numeric = rows, numeric
        self._by_tick: dict[int, list[tuple]] | None = None

    def get(self, tick: int, default: Any = None) -> Any:
        by_tick = self._by_tick
        if by_tick is None:
            by_tick = self._by_tick = _grouped(self._rows, self._numeric)
            self._rows = []
        return by_tick.get(tick, default)


class _Stored(NamedTuple):
    """What a tick's deferred parts are decoded with besides the batch's rows (tick: the file's
    own, before a Timeline's offset)."""

    tick: int
    t: float
    dt: float | None
    window: float | None  # the statement window's seconds


class _Parts:
    """Decodes a tick's pg_stat_io rows (Frame.io, .sources), statements (.statements,
    .statement_texts) and backends (.backends, .aio) from its stored rows, with the file's name tables."""

    def __init__(self, sources: dict, io_keys: dict, io_layout: schema.IoLayout, statements: dict,
                 backends: StoredBackends | None, tables: tuple):
        self.sources, self.io_keys, self.io_layout = sources, io_keys, io_layout
        self.names, self.backends_table = statements, backends
        # the batch's rows by tick: io (files before io_rows), io_rows, statement_stats, backend_io, aio
        self.io_src, self.io_rows, self.stmts, self.backend_io, self.aio = tables
        self.zero_src: dict[str, float | None] = dict.fromkeys(SOURCE_FIELDS, 0.0)
        self.zero_io: dict[str, float | None] = dict.fromkeys(IO_FIELDS, 0.0)

    def io(self, frame: Frame, s: _Stored) -> None:
        sources, keys, zero_src, zero_io = self.sources, self.io_keys, self.zero_src, self.zero_io
        tick_sources = {bt: dict(zero_src) for bt, first in sources.values() if first <= s.tick}
        for id_, *vals in self.io_src.get(s.tick, ()):
            if id_ in sources:
                tick_sources[sources[id_][0]] = {f: number(v) or 0.0 for f, v in zip(SOURCE_FIELDS, vals)}
        tick_io = {key: dict(zero_io) for key, first in keys.values() if first <= s.tick}
        tick_io.update({keys[id_][0]: schema.io_fields(vals, s.dt, self.io_layout)
                        for id_, *vals in self.io_rows.get(s.tick, ()) if id_ in keys})
        if tick_io:  # the writer keeps pg_stat_io once: the sums by backend type are made from its rows
            tick_sources.update(relation_sums(tick_io))
        frame.sources, frame.io = tick_sources, tick_io

    def statements(self, frame: Frame, s: _Stored) -> None:
        fields = statement_fields(self.stmts.get(s.tick, ()), s.window, self.names)
        frame.statements, frame.statement_texts = fields.get("statements", []), fields.get("statement_texts", {})

    def backends(self, frame: Frame, s: _Stored) -> None:
        present = self.backends_table
        fields = present.fields(s.t, s.dt, self.backend_io.get(s.tick), self.aio.get(s.tick), self.names) \
            if present else {}
        frame.backends, frame.aio = fields.get("backends", []), fields.get("aio", [])


_GROUPS = {"io": ("io", "sources"), "statements": ("statements", "statement_texts"), "backends": ("backends", "aio")}
_GROUP_OF = {name: group for group, names in _GROUPS.items() for name in names}


class DeferredFrame(Frame):
    """A replayed Frame whose pg_stat_io rows, statements and backends are decoded when first read
    (each pair of fields in _GROUPS at once, by the very code that decodes an eager Frame): a seek
    rebuilds a window of 301 Frames, and the default panes read none of these (decoding them was
    over a third of the rebuild). FrameHistory keeps them undecoded until a pane or a screen asks.
    Equal to the eager Frame of its tick."""

    __slots__ = ("_parts", "_stored")
    deferred = True

    def defer(self, parts: _Parts, stored: _Stored) -> None:
        for name in _GROUP_OF:
            delattr(self, name)  # unset: the first read comes to __getattr__
        self._parts, self._stored = parts, stored

    def may_hold(self, group: str) -> bool:
        """Whether the tick had stored rows of a group ("statements", "backends"), decoded or not:
        they may decode to none (rows without their statement or backend)."""
        p, tick = self._parts, self._stored.tick
        return bool(p.stmts.get(tick)) if group == "statements" else bool(p.backend_io.get(tick) or p.aio.get(tick))

    def __getattr__(self, name: str):  # only for a field not decoded yet
        group = _GROUP_OF.get(name)
        if group is None:
            raise AttributeError(name)
        getattr(self._parts, group)(self, self._stored)
        return object.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frame):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclass_fields(Frame))

    __hash__ = None  # type: ignore[assignment]  # as Frame's


def _values_decoder(columns: list[str], types: list[str], scales: list[int]) -> Callable[[tuple], dict]:
    """A tick row's stored values (after tick, t, elapsed, dt) to Frame.values: each one as
    value() and from_stored() read it, missing ones left out. A row whose numbers all pass
    (all_numbers) is decoded in a few passes in C, the others value by value, to the same result."""
    text = [c for c, ty in zip(columns, types) if ty in TEXT_TYPES]
    scaled = [(c, s) for c, ty, s in zip(columns, types, scales) if ty not in TEXT_TYPES and s != 1]

    def slow(stored: tuple) -> dict:
        values = {c: schema.from_stored(value(v, ty), s) for c, v, ty, s in zip(columns, stored, types, scales)}
        return {c: v for c, v in values.items() if v is not None}

    def decode(stored: tuple) -> dict:
        values = {c: v for c, v in zip(columns, stored) if v is not None}
        texts = [c for c in text if c in values]
        if not all_numbers([v for c, v in values.items() if c not in texts] if texts else values.values()):
            return slow(stored)
        for c in texts:
            v = label_text(values[c])
            if v is None:
                del values[c]
            else:
                values[c] = v
        for c, s in scaled:
            v = values.get(c)
            if v is not None:
                values[c] = v / s
        return values

    return decode
