"""Where time zero is in a recording, and which stretch of it a comparison looks at.

Two runs are compared on a shared axis x = t − origin: `start` puts 0 at the first tick, `workload`
at the workload's start (and ends the stretch at its stop), `checkpoint` at the start of the first
checkpoint. A comparison then cuts both runs to the shorter of the two stretches, so every total
and mean covers the same length of time in A and in B.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pgio_tui.store.reader import Recording  # annotations only: sqlite-utils stays unloaded
    from pgio_tui.store.timeline import Timeline

ALIGNMENTS = ("auto", "start", "workload", "checkpoint")
DEFAULT_ALIGN = "auto"  # diff, report and the diff screen: the workload's run when every recording has one
ORIGIN = {"start": "first tick", "workload": "workload start", "checkpoint": "first checkpoint start"}  # x = 0
_EPS = 1e-6
CHUNK_TICKS = 4096  # rows aligned_columns() turns into columns at once
_NAN = float("nan")
_FLOAT_OR_NONE = frozenset((float, type(None)))


class AlignError(ValueError):
    """The recording has no point to align on (no workload, no checkpoint): one line for the user."""


@dataclass(frozen=True, slots=True)
class Window:
    """The stretch of one recording a summary covers: wall times, x = t − origin_t."""

    align: str
    origin_t: float  # wall time of x = 0
    end_t: float  # wall time of the last instant included
    start_tick: int | None  # first and last tick inside (None: no tick inside)
    end_tick: int | None
    whole_workload: bool = False  # the window is the workload's whole run (its own summary applies)

    @property
    def length(self) -> float:
        return self.end_t - self.origin_t

    def x(self, t: float) -> float:
        return t - self.origin_t

    def contains(self, t: float) -> bool:
        return self.origin_t - _EPS <= t <= self.end_t + _EPS


def workload_run(rec: Recording | Timeline) -> tuple[float | None, float | None]:
    """Start and end wall time of the first workload's run itself: from the run's start (after
    `pgbench -i` or pgio's setup: the summary's run_start_t) to the tick that reported its end
    (which holds its last transactions); older files fall back to the workload's events/row."""
    workloads = rec.workloads()
    w = workloads[0] if workloads else {}
    summary = s if isinstance(s := w.get("summary"), dict) else {}
    start = summary.get("run_start_t")
    if not isinstance(start, (int, float)):
        start = next((e.t for e in rec.events(["workload_start"])), None)
        start = start if start is not None else w.get("start_t")
    stop = next((e.t for e in rec.events(["workload_stop"])), None)
    stop = stop if stop is not None else w.get("stop_t")
    return start, stop


def first_checkpoint_start(rec: Recording | Timeline) -> float | None:
    """Wall time the first checkpoint started: its start event, or the checkpoints table."""
    times = [e.t for e in rec.events(["checkpoint_start"])]
    times += [c["start_t"] for c in rec.checkpoints() if c.get("start_t") is not None]
    return min(times) if times else None


def span(rec: Recording | Timeline, align: str) -> tuple[float, float]:
    """(origin, end) wall times of the stretch `align` selects in one recording."""
    if align not in ALIGNMENTS or align == "auto":
        raise AlignError(f"unknown alignment {align!r}; use one of: {', '.join(ALIGNMENTS[1:])}")
    end = rec.end_t
    if rec.start_t is None or end is None:
        raise AlignError(f"{rec.path.name} holds no ticks")
    if align == "start":
        return rec.start_t, end
    if align == "workload":
        start, stop = workload_run(rec)
        if start is None:
            raise AlignError(f"{rec.path.name} has no workload start to align on: use --align start")
        return start, min(end, stop) if stop is not None and stop > start else end
    start = first_checkpoint_start(rec)
    if start is None:
        raise AlignError(f"{rec.path.name} has no checkpoint to align on: use --align start")
    return start, end


def window(rec: Recording | Timeline, align: str, length: float | None = None) -> Window:
    """The Window `align` selects (`auto` resolved), cut to `length` seconds when given."""
    align = resolve(align, rec)
    origin, end = span(rec, align)
    if length is not None:
        end = min(end, origin + length)
    whole = align == "workload" and workload_run(rec)[1] is not None and end >= span(rec, align)[1] - _EPS
    first = last = None
    for tick, t, _ in rec.rows([], rec.tick_at(origin - _EPS), rec.tick_at(end + _EPS)):
        if origin - _EPS <= t <= end + _EPS:
            first = tick if first is None else first
            last = tick
    return Window(align, origin, end, first, last, whole)


def common_windows(a: Recording, b: Recording, align: str) -> tuple[Window, Window]:
    """The windows A and B are compared over (see windows_of)."""
    wa, wb = windows_of([a, b], align)
    return wa, wb


def windows_of(recs: list[Recording], align: str) -> list[Window]:
    """The windows N recordings are compared over. Aligned on their workloads, each is its own run
    (a slower run is not cut: its totals and the workload's own summary cover the same run);
    otherwise all are cut to the shortest of the stretches."""
    align = resolve(align, *recs)
    if align == "workload":
        return [window(r, align) for r in recs]
    spans = [span(r, align) for r in recs]
    length = max(0.0, min(end - origin for origin, end in spans))
    return [window(r, align, length) for r in recs]


def auto_align(*recs: Recording | Timeline) -> str:
    """`workload` when every recording launched one, else `start`."""
    for rec in recs:
        if workload_run(rec)[0] is None:
            return "start"
    return "workload"


def resolve(align: str, *recs: Recording | Timeline) -> str:
    """`auto` (the default everywhere) made concrete for these recordings."""
    return auto_align(*recs) if align == "auto" else align


@dataclass(slots=True)
class Columns:
    """A window's ticks as columns: x (seconds from the origin), dt (the time each tick's rates
    cover: the distance to the previous tick, the nominal interval for a recording's first tick)
    and one list per metric (None where the tick has no value); ticks and t: the ticks' numbers
    and wall times."""

    x: list[float]
    dt: list[float]
    values: dict[str, Any]  # a list each (or a FloatColumn: aligned_columns' compact)
    ticks: list[int] = field(default_factory=list)
    t: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.x)


class FloatColumn:
    """A metric's column of floats and None in 8 bytes a value instead of 32 (None held as NaN: a
    stored number is never NaN, validate.number), for windows as long as a week; tolist() gives
    the list of floats and None back."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values = array("d")

    def __len__(self) -> int:
        return len(self.values)

    def extend(self, part: Sequence) -> bool:
        """Appends `part`; False (nothing appended) when it holds anything but floats and None."""
        if not set(map(type, part)) <= _FLOAT_OR_NONE:
            return False
        self.values.fromlist([_NAN if v is None else v for v in part])
        return True

    def __delitem__(self, index: slice) -> None:
        del self.values[index]

    def __iter__(self) -> Iterator[float | None]:
        return (None if v != v else v for v in self.values)

    def tolist(self) -> list[float | None]:
        return [None if v != v else v for v in self.values]


def aligned_columns(rec: Recording | Timeline, win: Window, metrics: list[str], compact: bool = False) -> Columns:
    """The window's ticks of `metrics`, read in one query and turned into columns in C, CHUNK_TICKS
    rows at a time: a week's rows held as tuples beside the columns would double what they take.
    `compact`: a metric's column is a FloatColumn while it holds only floats and None."""
    if win.start_tick is None:
        return Columns([], [], {m: [] for m in metrics})
    lo = min(rec.tick_at(win.origin_t - _EPS), win.start_tick)  # the tick before, for the first dt
    rows = rec.rows(metrics, lo, win.end_tick)
    ticks: list[int] = []
    ts: list[float] = []
    values: list[Any] = [FloatColumn() if compact else [] for _ in metrics]
    while chunk := list(islice(rows, CHUNK_TICKS)):
        tick_part, t_part, _elapsed, *parts = zip(*chunk)
        ticks.extend(tick_part)
        ts.extend(t_part)
        for k, part in enumerate(parts):
            col = values[k]
            if isinstance(col, FloatColumn) and not col.extend(part):
                values[k] = col = col.tolist()  # not floats: kept as read
            if not isinstance(col, FloatColumn):
                col.extend(part)
    first = 1 if ticks[0] < win.start_tick else 0
    interval = float(rec.meta.get("interval_s") or 1.0)
    dt = [b - a for a, b in zip(ts, ts[1:])]
    dt = dt[first - 1:] if first else [interval] + dt
    for c in (ticks, ts, *values):
        del c[:first]
    x = [t - win.origin_t for t in ts]
    return Columns(x, dt, dict(zip(metrics, values)), ticks, ts)
