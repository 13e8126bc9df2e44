"""`pgio-tui export` and `pgio-tui info`: a recording as CSV / JSON Lines, and as a short summary.

Export streams one row per tick straight from one SQL cursor, so memory stays constant however long
the recording is.
"""

from __future__ import annotations

import csv
import datetime as _dt
import fnmatch
import json
from collections import Counter
from collections.abc import Iterable
from typing import TextIO

from pgio_tui.format import clock, size as size_text
from pgio_tui.naming import connection_text, server_name
from pgio_tui.safe_text import csv_cell, printable
from pgio_tui.store.reader import Recording
from pgio_tui.workload_facts import workload_command, workload_outcome

FORMATS = ("csv", "json", "openmetrics")
FIXED_COLUMNS = ("tick", "t", "elapsed")


def select_metrics(recording: Recording, globs: Iterable[str] | None = None) -> list[str]:
    """The metrics matching any of the fnmatch `globs` (all when None), in catalog order.
    A glob that matches nothing is a ValueError naming a few metrics that exist."""
    available = recording.metric_names()
    if not globs:
        return available
    chosen: set[str] = set()
    for glob in globs:
        hits = fnmatch.filter(available, glob)
        if not hits:
            sample = ", ".join(available[:6]) + (", ..." if len(available) > 6 else "")
            raise ValueError(f"--metrics {glob!r} matches no metric in {recording.path.name}; "
                             f"available: {sample} ({len(available)} in all)")
        chosen.update(hits)
    return [m for m in available if m in chosen]


def export(recording: Recording, out: TextIO, fmt: str = "csv", metrics: list[str] | None = None,
           start_tick: int | None = None, end_tick: int | None = None) -> int:
    """Write one row per tick: tick, t (Unix epoch s), elapsed (s), then each metric.

    fmt "csv": a header line, empty cells for missing values. fmt "json": JSON Lines, one object
    per tick, null for missing values. `metrics` are globs (see select_metrics). Returns rows written.
    fmt "openmetrics": Prometheus names with timestamps (pgio_tui.export.openmetrics); returns samples.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if fmt == "openmetrics":  # Prometheus names and totals, for backfilling (samples, not rows)
        from pgio_tui.export.openmetrics import write_openmetrics
        return write_openmetrics(recording, out, metrics, start_tick, end_tick)
    names = select_metrics(recording, metrics)
    header = [*FIXED_COLUMNS, *names]
    rows = (tuple(_number(v) for v in row) for row in recording.rows(names, start_tick, end_tick))
    n = 0
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(map(csv_cell, header))
        for n, row in enumerate(rows, 1):
            w.writerow(map(csv_cell, row))
    else:
        for n, row in enumerate(rows, 1):
            out.write(json.dumps(dict(zip(header, row)), separators=(",", ":"), allow_nan=False) + "\n")
    return n


def _number(v):
    """Whole numbers without the ".0" SQLite's REAL columns give them (kB, counts, rates at 1 Hz)."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


# --- info ---------------------------------------------------------------------------------------

def describe(recording: Recording) -> str:
    """The text of `pgio-tui info FILE`: where, when and what a recording holds."""
    r, meta = recording, recording.meta
    tz = _recorded_tz(meta.get("created_at"))
    file_size = r.path.stat().st_size
    wal = r.path.with_name(r.path.name + "-wal")
    wal_size = wal.stat().st_size if wal.exists() else 0
    wal_note = f" + {size_text(wal_size)} WAL: still being written, or not closed cleanly" if wal_size else ""
    lines = [("file", f"{r.path} ({size_text(file_size)}{wal_note})")]
    if r.note:
        lines.append(("warning", r.note))
    lines.append(("schema", f"{r.schema_version} (recorded by pgio-tui {meta.get('tool_version', '?')})"))
    lines.append(("host", server_name(meta, dbname=False)))
    if meta.get("client_host") or meta.get("os"):
        lines.append(("recorded on", f"{meta.get('client_host') or ''}  {meta.get('os', '')}".strip()))
    if "server_version" in meta:
        num = meta.get("server_version_num")
        lines.append(("server", f"PostgreSQL {meta['server_version']}" + (f" ({num})" if num else "")))
    if "conninfo" in meta:
        lines.append(("connection", connection_text(meta)))
    if meta.get("interval_s"):
        lines.append(("interval", f"{meta['interval_s']:g} s"))
    if meta.get("command_line"):
        lines.append(("command", str(meta["command_line"])))
    start_t, end_t, first, last = r.start_t, r.end_t, r.first_tick, r.last_tick
    if r.tick_count and start_t is not None and end_t is not None and first is not None and last is not None:
        lines.append(("start", _when(start_t, tz)))
        lines.append(("end", f"{_when(end_t, tz)}  (duration {clock(r.duration, hours=True)})"))
        missed = (last - first + 1) - r.tick_count
        late = len(r.events(["late"]))
        ticks = f"{r.tick_count} ({r.first_tick}..{r.last_tick})"
        ticks += f", {missed} missed in {_gap_count(r)} gap(s)" if missed else ", none missed"
        ticks += f", {late} late" if late else ""
        lines.append(("ticks", ticks))
    else:
        lines.append(("ticks", "none"))
    kinds = Counter(str(c.get("kind", "?")) for c in r.checkpoints())
    lines.append(("checkpoints", f"{sum(kinds.values())}" + (f": {_counts(kinds)}" if kinds else "")))
    events = r.events()
    lines.append(("events", _counts(Counter(e.event.kind for e in events)) or "none"))
    outages = [e for e in events if e.event.kind == "gap"]
    if outages:
        lines.append(("gap events", "; ".join(f"tick {e.tick}: {e.event.text}" for e in outages[:3])
                      + (f"; … {len(outages) - 3} more" if len(outages) > 3 else "")))
    if r.tick_count and not any(e.event.kind == "stop" for e in events):
        lines.append(("closed", "no: the recording has no stop event (the recorder ended without closing it; "
                                "the ticks up to the last one are kept)"))
    devices = [f"{d} ({role})" if role else d for d, role in r.devices.items()]
    lines.append(("devices", ", ".join(devices) or "none"))
    lines += [("workload", _workload(w)) for w in r.workloads()] or [("workload", "none")]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {printable(v)}" for k, v in lines)


def _gap_count(r: Recording) -> int:
    """Runs of missing tick numbers."""
    return r.db.conn.execute(
        "SELECT count(*) FROM ticks a WHERE a.tick > ? AND NOT EXISTS "
        "(SELECT 1 FROM ticks b WHERE b.tick = a.tick - 1)", (r.first_tick,)).fetchone()[0]


def _workload(w: dict) -> str:
    text = f"{w.get('kind')}: {workload_command(w)}"
    if w.get("stop_t") is not None and w.get("start_t") is not None:
        text += f"  ({clock(w['stop_t'] - w['start_t'], hours=True)}, {workload_outcome(w)})"
    else:
        text += "  (no stop recorded)"
    return text


def _recorded_tz(created_at) -> _dt.tzinfo | None:
    """The UTC offset the recording machine used, so times read as they did there."""
    try:
        return _dt.datetime.fromisoformat(str(created_at)).tzinfo
    except ValueError:
        return None


def _when(t: float, tz: _dt.tzinfo | None) -> str:
    d = _dt.datetime.fromtimestamp(t, tz) if tz else _dt.datetime.fromtimestamp(t).astimezone()
    return d.isoformat(timespec="seconds")


def _counts(c: Counter) -> str:
    return ", ".join(f"{k} {n}" for k, n in c.most_common())
