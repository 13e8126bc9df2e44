"""Moments: the ticks worth jumping to in a recording (replay's n/N and the scrubber's marks).

Textual-free. Recorded events (checkpoint start/end, workload start/stop, annotation, gap, restart,
setting change) plus what only the series show: latency above the recording's own p99, and Dirty
crossing the kernel's background threshold. Checkpoints and workloads also come from their tables
when a recording has no events for them (older files, statistics-only checkpoint tracking).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any, NamedTuple

from pgio_tui import metrics as M
from pgio_tui.stats import percentile
from pgio_tui.workload_facts import workload_command

RECORDED = ("checkpoint_start", "checkpoint_end", "workload_start", "workload_stop", "annotation", "gap",
            "reconnect", "server_restart", "stats_reset", "setting_change")
DERIVED = ("latency_high", "dirty_above", "dirty_below", "finding")  # finding: analysis/findings_out.py
KINDS = RECORDED + DERIVED
LATENCY_METRICS = (M.LATENCY_P99_MS, M.LATENCY_MEAN_MS, M.STATEMENTS_MEAN_MS)  # compared: the first with data
DIRTY, DIRTY_BG = M.MEM_DIRTY_KB, M.MEM_DIRTY_BACKGROUND_THRESHOLD_KB


class Moment(NamedTuple):
    tick: int
    t: float
    kind: str
    text: str


def find_moments(rec: Any) -> list[Moment]:
    """Every moment of an open Recording (up to the last tick its refresh() saw), in tick order."""
    if rec.last_tick is None:
        return []
    out: list[Moment] = []
    seen: set[tuple[str, int]] = set()

    def add(tick: int | None, t: float, kind: str, text: str) -> None:
        if tick is None:  # tick times are stored to the ms: a time from another table may be 0.5 ms early
            tick = rec.tick_at(t + 0.0005)
        if (kind, tick) not in seen and tick <= rec.last_tick:
            seen.add((kind, tick))
            out.append(Moment(tick, t, kind, text))

    events = rec.events(RECORDED)
    kinds = {e.event.kind for e in events}
    for e in events:
        add(e.tick, e.t, e.event.kind, e.event.text)
    if not kinds & {"checkpoint_start", "checkpoint_end"}:
        for c in rec.checkpoints():
            what = f"checkpoint ({c.get('kind') or '?'})"
            if c.get("start_t") is not None:
                add(c.get("start_tick"), c["start_t"], "checkpoint_start", f"{what} starting")
            if c.get("end_t") is not None:
                add(c.get("end_tick"), c["end_t"], "checkpoint_end", f"{what} complete")
    if not kinds & {"workload_start", "workload_stop"}:
        for w in rec.workloads():
            name = workload_command(w)
            if w.get("start_t") is not None:
                add(None, w["start_t"], "workload_start", f"started: {name}")
            if w.get("stop_t") is not None:
                add(None, w["stop_t"], "workload_stop", f"stopped (exit {w.get('exit_code')}): {name}")
    out += latency_moments(rec) + dirty_moments(rec)
    out.sort(key=lambda m: (m.tick, KINDS.index(m.kind)))
    return out


def _rows(rec: Any, metrics: list[str]) -> Iterable[tuple]:
    try:
        return rec.rows(metrics)
    except KeyError:  # a metric this file has no column for
        return ()


def latency_moments(rec: Any) -> list[Moment]:
    """Ticks where the per-tick latency rises above the recording's p99 of it (rising edges only,
    so a slow minute is one moment, not sixty). The ticks, times and values are kept in arrays, 8
    bytes each, not as a week of (tick, t, value) tuples."""
    names = set(rec.metric_names())
    metric = next((m for m in LATENCY_METRICS if m in names), None)
    if metric is None:
        return []
    ticks, times, values = array("q"), array("d"), array("d")
    for tick, t, _, v in _rows(rec, [metric]):
        if v is not None:  # a stored number and a tick's time are floats (REAL columns, validate.number)
            ticks.append(tick)
            times.append(t)
            values.append(v)
    p99 = percentile(sorted(values), 99)
    if p99 is None:  # no value at all
        return []
    out, above = [], False
    for tick, t, v in zip(ticks, times, values):
        if v > p99 and not above:
            out.append(Moment(tick, t, "latency_high", f"{metric} {v:.1f} ms > the recording's p99 {p99:.1f} ms"))
        above = v > p99
    return out


def dirty_moments(rec: Any) -> list[Moment]:
    """Ticks where kernel Dirty crosses vm.dirty_background's threshold, up and back down."""
    names = set(rec.metric_names())
    if not {DIRTY, DIRTY_BG} <= names:
        return []
    out, above = [], None
    for tick, t, _, dirty, bg in _rows(rec, [DIRTY, DIRTY_BG]):
        if dirty is None or not bg:
            continue
        now = dirty >= bg
        if above is not None and now != above:
            mb = dirty / 1024
            out.append(Moment(tick, t, "dirty_above", f"Dirty {mb:.0f} MB crossed the background threshold")
                       if now else Moment(tick, t, "dirty_below", f"Dirty {mb:.0f} MB back below the background "
                                                                     "threshold"))
        above = now
    return out
