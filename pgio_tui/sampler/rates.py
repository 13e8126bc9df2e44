"""Per-second rates and the per-tick figures computed from one sample: pure functions.

A counter that went backwards (stats reset, restart, evicted statements) gives no figure for
the tick, never a negative or a spike.
"""

from __future__ import annotations

from collections.abc import Callable

from pgio_tui import metrics as M
from pgio_tui.frame import BLOCK_KB, IO_BYTES_OPS, IO_FIELDS, Frame, IoKey


# Cumulative counters that become per-second rates, and levels read as they are: (metric, section of
# the raw sample, column), from the catalog's `read` (metrics.py).
COUNTER_RATES = M.counter_rates()
COLUMN_GAUGES = M.column_gauges()


def rate(cur, prev, dt) -> float | None:
    """Per-second rate of a cumulative counter; None when unknown or the counter went backwards."""
    if cur is None or prev is None or not dt:
        return None
    delta = float(cur) - float(prev)
    return delta / dt if delta >= 0 else None


_KB_OPS = tuple((IO_FIELDS.index(kb), IO_FIELDS.index(op)) for kb, op in IO_BYTES_OPS.items())


def _beyond_blocks(vals: list) -> list | None:
    """A pg_stat_io row's cumulative values with its kB as those beyond one block per operation; None
    when its operations moved less than a block each (a server built with smaller blocks)."""
    out = list(vals)
    for k, o in _KB_OPS:
        if vals[k] is not None and vals[o] is not None:
            out[k] = vals[k] - BLOCK_KB * vals[o]
            if out[k] < 0:
                return None
    return out


def io_row_rates(rows: list | None, prev: list | None, rate_of: Callable[[str, str, object, object], float | None],
                 names: dict) -> dict[IoKey, dict[str, float | None]]:
    """pg_stat_io rows of this tick and the last (tick_sql.io_rows_sql) -> rates by (backend_type,
    object, context), IO_FIELDS; rate_of(backend_type, counter name, cur, prev) makes one (spread
    as its publisher needs). A row new since the last tick starts from zero (only rows that have done
    I/O are read); no previous sample, or a counter that went back, gives None. `names`: a cache.
    The kB are rated as those beyond one block per operation, 8 kB per operation added back: spread
    apart from their operations, a tick could show less than a block per read."""
    if prev is None or not rows:
        return {}
    before = {(bt, obj, ctx): vals for bt, obj, ctx, *vals in prev}
    out: dict[IoKey, dict[str, float | None]] = {}
    for bt, obj, ctx, *vals in rows:
        key = (bt, obj, ctx)
        pvals = before.get(key) or [None if v is None else 0 for v in vals]
        counter_names = names.get(key)
        if counter_names is None:  # (plain, with the kB beyond blocks)
            counter_names = names[key] = tuple(tuple(f"{bt}.{obj}.{ctx}.{f}{suffix if f in IO_BYTES_OPS else ''}"
                                                     for f in IO_FIELDS) for suffix in ("", "_beyond_blocks"))
        cur, last = _beyond_blocks(vals), _beyond_blocks(pvals)
        beyond = cur is not None and last is not None
        if beyond:
            vals, pvals = cur, last
        row = {f: rate_of(bt, name, c, pc) for f, name, c, pc in zip(IO_FIELDS, counter_names[beyond], vals, pvals)}
        for kb, op in IO_BYTES_OPS.items() if beyond else ():
            kb_beyond, ops = row[kb], row[op]
            row[kb] = None if kb_beyond is None or ops is None else kb_beyond + BLOCK_KB * ops
        out[key] = row
    return out


def statement_latency(cur: dict | None, prev: dict | None, dt: float | None, v: dict) -> None:
    """Mean/stddev over the `dt` seconds (server clock) between two reads of the sums, of the
    statements pg_stat_statements timed (top-level, utility and our own left out): statement
    execution time, not transaction latency (`latency.*`)."""
    v[M.STATEMENTS_CALLS_S] = v[M.STATEMENTS_MEAN_MS] = v[M.STATEMENTS_STDDEV_MS] = None
    if not cur or not prev or not dt:
        return
    calls = (cur["calls"] or 0) - (prev["calls"] or 0)
    total = (cur["total_ms"] or 0) - (prev["total_ms"] or 0)
    sumsq = (cur["sumsq"] or 0) - (prev["sumsq"] or 0)
    if calls < 0 or total < 0:  # entries evicted or reset: unknown this tick
        return
    v[M.STATEMENTS_CALLS_S] = calls / dt
    if calls > 0:
        mean = total / calls
        v[M.STATEMENTS_MEAN_MS] = mean
        v[M.STATEMENTS_STDDEV_MS] = max(0.0, sumsq / calls - mean * mean) ** 0.5 if sumsq >= 0 else None


def sessions_and_waits(activity: list | None, frame: Frame) -> None:
    """Session counts and the wait sample. Idle main loops (Activity) and idle clients are not waits.
    `activity` None: not sampled this tick, the counts unknown (None), no waits (M.waits_sampled)."""
    if activity is None:
        frame.values.update(dict.fromkeys(M.SESSION_COUNTS))
        frame.waits = []
        return
    active = io_wait = lock_wait = 0
    waits: dict[tuple[str, str, str], int] = {}
    for btype, wtype, wevent, state, n in activity or ():
        if btype is None:  # another role's backend without pg_read_all_stats
            continue
        client = btype == "client backend"
        if client and state == "active":
            active += n
        if wtype == "IO":
            io_wait += n
        elif wtype in ("Lock", "LWLock"):
            lock_wait += n
        if wtype == "Activity" or (client and state in (None, "idle")):
            continue
        key = (btype, wtype or "CPU", wevent or "Running")
        waits[key] = waits.get(key, 0) + n
    frame.values.update({M.SESSIONS_ACTIVE: active, M.SESSIONS_IO_WAIT: io_wait, M.SESSIONS_LOCK_WAIT: lock_wait})
    frame.waits = [(b, t, e, n) for (b, t, e), n in sorted(waits.items(), key=lambda kv: -kv[1])]
