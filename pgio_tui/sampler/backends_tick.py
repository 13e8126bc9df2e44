"""What a tick adds about backends: per-process I/O rates (sources/backends.py), asynchronous I/O
in flight (18), and which statements the busiest backends run. PostgresTick calls it."""

from __future__ import annotations

from pgio_tui import metrics as M
from pgio_tui.frame import BACKENDS_TOP, Event, Frame
from pgio_tui.sources.backends import DENIED, DENIED_NOTE, BackendTracker
from pgio_tui.sources.tick_sql import RawSample


def backends_tick(backends: BackendTracker, raw: RawSample, dt: float | None, frame: Frame,
                  aios: bool) -> list[int]:
    """Add the backends and AIO in flight to the frame; returns the queryids the busiest
    backends run (their texts go out as the top statements' do). A tick that did not read the
    processes (backends None: tick_sql) leaves them and the AIO in flight out; `dt`: seconds since
    they were last read."""
    rows = raw.get("backends")
    if rows is not None:
        was = backends.proc_mode
        frame.backends = backends.update(rows, raw["server_t"], dt)
        if backends.proc_mode == DENIED and was != DENIED:
            frame.events.append(Event("note", DENIED_NOTE))
        frame.events.extend(Event("autovacuum", text) for text in backends.vacuums(rows))
    frame.aio = sorted((str(st), str(op), int(n)) for st, op, n in raw.get("aios") or ())
    # pg_aios is read with the processes (tick_sql): unknown on a tick that did not read them
    frame.values[M.AIO_IN_FLIGHT] = sum(n for _, _, n in frame.aio) if aios and rows is not None else None
    return [b["query_id"] for b in frame.backends[:BACKENDS_TOP] if b.get("query_id")]
