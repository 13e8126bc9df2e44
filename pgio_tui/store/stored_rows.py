"""The values a Recording hands out, decoded from stored rows: settings, events, checkpoints.

Stored text and numbers are untrusted (a recording is a shared file), so every row goes through
these decoders (built on store/validate.py) before it becomes a Python value.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from pgio_tui.frame import Event
from pgio_tui.store import schema
from pgio_tui.store.validate import json_object, label_text, line_text, number, tick_number
from pgio_tui.store.validate import queryid as queryid_of

NEVER = math.inf  # the first tick of a device or source never seen


class Setting(NamedTuple):
    name: str
    value: Any
    unit: str | None
    category: str | None  # postgres | kernel | device | machine
    tick: int | None  # None: the snapshot at start; else the tick the value changed


class TickEvent(NamedTuple):
    tick: int | None
    t: float
    event: Event


CHECKPOINT_TEXT = {"kind", "lsn", "redo_lsn", "source"}
WORKLOAD_NUMBERS = {"id", "start_t", "stop_t", "exit_code"}


def first_tick(tick) -> float:
    """A device's or source's first tick; never seen (or not a number) is NEVER."""
    tick = tick_number(tick)
    return NEVER if tick is None else tick


def stored_event(kind, body, data) -> Event:
    return Event(label_text(kind) or "?", line_text(body) or "", json_object(data))


def checkpoint_row(row: tuple) -> dict[str, Any]:
    c = {k: v for k, v in json_object(row[-1]).items() if k not in schema.CHECKPOINT_COLUMNS}
    for k, v in zip(schema.CHECKPOINT_COLUMNS, row):
        v = label_text(v) if k in CHECKPOINT_TEXT else number(v)
        if v is not None:
            c[k] = v
    return c


def statement_fields(rows, window: float | None, statements: dict) -> dict[str, Any]:
    """A tick's stored statement rows back to Frame.statements (rates over the window) and
    the texts of those queryids."""
    if not rows or not window or window <= 0:
        return {}
    out, texts = [], {}
    for sid, *vals in rows:
        queryid, qtext = statements.get(sid, (None, None))
        vals = [number(v) for v in vals]
        if queryid is None or not vals[0] or vals[0] < 0:
            continue  # a row without its statement or calls: not a measurement
        st: dict[str, Any] = {"queryid": queryid}
        for (fld, scale), v in zip(schema.STATEMENT_COLUMNS.values(), vals):
            per_window = fld not in ("mean_ms", "stddev_ms")
            st[fld] = None if v is None else v / scale / (window if per_window else 1)
        calls = vals[0]
        st["mean_ms"] = vals[1] / 1000 / calls if calls and vals[1] is not None else None
        out.append(st)
        if qtext is not None:
            texts[queryid] = qtext
    out.sort(key=lambda st: -(st.get("time_ms_s") or 0))
    return {"statements": out, "statement_texts": texts}


def statement_total(row: tuple) -> tuple[int | None, dict[str, Any] | None]:
    """(queryid, totals) from one summed statement_stats row (statement_totals): calls, total, mean
    and stddev ms, blocks read, dirtied, written, WAL bytes; None for a row that sums to nothing."""
    queryid, calls, time_us, sumsq_us, read, dirtied, written, wal = (queryid_of(row[0]),
                                                                      *(number(v) for v in row[1:]))
    if queryid is None or not calls or calls < 0 or time_us is None:
        return queryid, None
    mean = time_us / calls / 1000
    var = (sumsq_us / calls) / 1e6 - mean * mean if sumsq_us is not None else None
    return queryid, {"calls": calls, "total_ms": time_us / 1000, "mean_ms": mean,
                     "stddev_ms": None if var is None else math.sqrt(max(0.0, var)),
                     "read": read, "dirtied": dirtied, "written": written, "wal_bytes": wal}
