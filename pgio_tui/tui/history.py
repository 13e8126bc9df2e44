"""FrameHistory: the recent past that every pane draws from, fed by any stream of Frames.

Textual-free on purpose: the live view, replay and diff fill it from a sampler or a recording and
the widgets only read it, so no pane knows where its data comes from. Series are column lists
aligned on one time list (None where a tick lacked the metric), so a window is two bisects and a
slice, and a gap between ticks is visible as a jump in tick numbers.

A replayed Frame may be deferred (store/rebuild.py's DeferredFrame): its pg_stat_io rows, statements
and backends are kept here undecoded, as the Frame, and decoded when a pane or a screen first reads
them, so a seek that rebuilds the window pays only for what is drawn.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any, NamedTuple, cast

from pgio_tui import metrics as M
from pgio_tui.frame import IO_OPS, TIMED_OPS, Event, Frame, Value
from pgio_tui.ratios import per_op_ms
from pgio_tui.sources.checkpoint_rows import too_frequent

BACKEND_TICKS = 900  # ticks of per-backend rows kept (the live list can be long): 15 min at 1 s
SAMPLE_LOOKBACK = 256  # ticks latest_sampled() looks back (a stride of 40 with 5,000 processes)
CHECKPOINTS_KEPT = 20  # finished checkpoints (and too-frequent warnings) kept for the history screen
DEFAULT_CAPACITY = 7200  # ticks kept: 2 h at 1 s; the longest zoom (1 h) fits at intervals >= 0.5 s
EVENT_KINDS_SHOWN = ("annotation", "gap", "reconnect", "server_restart", "stats_reset", "setting_change",
                     "workload_start", "workload_stop")


class Window(NamedTuple):
    """One metric over a time window: parallel lists."""

    t: list[float]
    tick: list[int]
    v: list[Any]


class Span(NamedTuple):
    start: float
    end: float | None  # None: still running


class TimedEvent(NamedTuple):
    t: float
    tick: int
    event: Event


class FrameHistory:
    """Ring buffers per metric for the charts' time window, checkpoint spans, events and waits."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.capacity = capacity
        self.epoch = 0
        self.clear()

    def clear(self) -> None:
        """Forget everything (replay uses this when it seeks)."""
        self.epoch += 1  # views caching reductions of the series start over
        self.t: list[float] = []
        self.ticks: list[int] = []
        self.series: dict[str, list[Any]] = {}
        # Per tick its wait sample, None for a tick that took none (M.waits_sampled: unknown, not "no waits")
        self.waits: list[list[tuple[str, str, str, int]] | None] = []
        # Per tick, Frame.sources (pg_stat_io rows by backend type) and Frame.io (16+), or a deferred Frame
        # to read them from (_part): read through sources and io, or _part for one tick.
        self._sources: list[dict[str, dict[str, float | None]] | Frame] = []
        self._io: list[dict[tuple[str, str, str], dict[str, float | None]] | Frame] = []
        self.events: list[TimedEvent] = []
        self.spans: list[Span] = []
        self.checkpoints: list[dict[str, Any]] = []  # finished, oldest first (the last CHECKPOINTS_KEPT)
        self.checkpoint_warnings: list[tuple[float, str]] = []  # (t, "checkpoints are occurring too frequently ...")
        self.devices: dict[str, str | None] = {}  # name -> role, in order of appearance
        # (t, window s, top rows), or (t, window s, deferred Frame) for a tick that stored rows (which may
        # decode to none): read through statements, or statements_at.
        self._statements: list[tuple[float, Value, list[dict[str, Any]] | Frame]] = []
        self._statement_texts: dict[int, str] = {}  # queryid -> query text (untrusted: plain text only)
        self._texts_pending: list[Frame] = []  # Frames whose texts are not in _statement_texts yet, in order
        # Ticks with backends or AIO rows (the last BACKEND_TICKS): (t, backends sorted by I/O, aio rows),
        # or (t, deferred Frame, None) for a tick that stored rows: read through backends, or backends_at.
        self._backends: list[tuple[float, list[dict[str, Any]] | Frame, list[tuple[str, str, int]] | None]] = []
        self.last: Frame | None = None
        self.version = 0  # bumped on every change: views redraw when it moved
        # Kept between calls, so that a redraw costs the ticks that arrived, not the whole history:
        self._trimmed = 0  # ticks dropped from the front so far: index i now was i + _trimmed at push
        self._none_upto: dict[str, int] = {}  # metric -> k: series[metric][:k] holds no value (has())
        # waits_summary's last sums: absolute i, j, key -> [sessions, ticks with the key], sampled ticks
        self._waits_window: tuple[int, int, dict, int] | None = None

    def __len__(self) -> int:
        return len(self.t)

    # --- feeding --------------------------------------------------------------------------------

    def extend(self, frames: Iterable[Frame]) -> None:
        for f in frames:
            self.push(f)

    def push(self, frame: Frame) -> None:
        if self.t and frame.t < self.t[-1]:  # a stream that went back in time starts over
            self.clear()
        n = len(self.t)
        self.t.append(frame.t)
        self.ticks.append(frame.tick)
        values = frame.flat()
        for name, col in self.series.items():
            col.append(values.pop(name, None))
        for name, v in values.items():  # a metric seen for the first time
            self.series[name] = [None] * n + [v]
        for dev in frame.devices:
            if dev not in self.devices:
                self.devices[dev] = frame.device_roles.get(dev)
        for dev, role in frame.device_roles.items():
            self.devices[dev] = role
        self.waits.append(list(frame.waits) if M.waits_sampled(frame.values) else None)
        deferred = frame.deferred
        self._sources.append(frame if deferred else frame.sources)
        self._io.append(frame if deferred else frame.io)
        for e in frame.events:
            if e.kind in EVENT_KINDS_SHOWN:
                self.events.append(TimedEvent(frame.t, frame.tick, e))
            elif e.kind == "note" and too_frequent(e.text) is not None:
                self.checkpoint_warnings = (self.checkpoint_warnings + [(frame.t, e.text)])[-CHECKPOINTS_KEPT:]
        self._track_checkpoint(frame)
        if deferred or self._texts_pending:  # texts are added in push order
            self._texts_pending.append(frame)
        else:
            self._statement_texts.update(frame.statement_texts)
        if frame.may_hold("statements"):
            self._statements.append((frame.t, frame.values.get(M.STATEMENTS_WINDOW_S),
                                     frame if deferred else frame.statements))
        if frame.may_hold("backends") and M.waits_sampled(frame.values):  # a tick that read the processes
            self._backends.append((frame.t, frame, None) if deferred else (frame.t, frame.backends, frame.aio))
            if len(self._backends) > BACKEND_TICKS + 64 and len(self.backends) > BACKEND_TICKS + 64:
                del self._backends[:-BACKEND_TICKS]  # counted as decoded: the ticks that hold some
        if frame.checkpoints:
            self.checkpoints = (self.checkpoints + list(frame.checkpoints))[-CHECKPOINTS_KEPT:]
        self.last = frame
        self.version += 1
        if len(self.t) > self.capacity + max(64, self.capacity // 8):
            self._trim(len(self.t) - self.capacity)

    def _track_checkpoint(self, frame: Frame) -> None:
        active = frame.values.get(M.CHECKPOINT_ACTIVE)
        running = bool(self.spans) and self.spans[-1].end is None
        if active and not running:
            elapsed = frame.values.get(M.CHECKPOINT_ELAPSED_S) or 0.0
            self.spans.append(Span(frame.t - float(elapsed), None))
        elif not active and running and active is not None:
            self.spans[-1] = Span(self.spans[-1].start, frame.t)

    def _trim(self, k: int) -> None:
        del self.t[:k], self.ticks[:k], self.waits[:k], self._sources[:k], self._io[:k]
        for col in self.series.values():
            del col[:k]
        self._trimmed += k
        self._none_upto = {m: n - k for m, n in self._none_upto.items() if n > k}
        t0 = self.t[0]
        self.events = [e for e in self.events if e.t >= t0]
        self.spans = [s for s in self.spans if s.end is None or s.end >= t0]
        self._statements = [s for s in self._statements if s[0] >= t0]
        self._backends = [b for b in self._backends if b[0] >= t0]

    # --- deferred parts, decoded when read --------------------------------------------------------

    @property
    def sources(self) -> list[dict[str, dict[str, float | None]]]:
        """Per tick: pg_stat_io rows by backend type (Frame.sources)."""
        for k in range(len(self._sources)):
            _part(self._sources, k, "sources")
        return cast(list, self._sources)  # every one decoded

    @property
    def io(self) -> list[dict[tuple[str, str, str], dict[str, float | None]]]:
        """Per tick: Frame.io (16+)."""
        for k in range(len(self._io)):
            _part(self._io, k, "io")
        return cast(list, self._io)

    @property
    def statements(self) -> list[tuple[float, Value, list[dict[str, Any]]]]:
        """The ticks with statements: (t, window s, top rows)."""
        for i in reversed(range(len(self._statements))):
            self._statement_entry(i)
        return cast(list, self._statements)

    @property
    def statement_texts(self) -> dict[int, str]:
        """queryid -> query text, of every statement pushed (untrusted: plain text only)."""
        if self._texts_pending:
            for f in self._texts_pending:
                self._statement_texts.update(f.statement_texts)
            self._texts_pending = []
        return self._statement_texts

    @property
    def backends(self) -> list[tuple[float, list[dict[str, Any]], list[tuple[str, str, int]]]]:
        """The ticks with backends or AIO rows: (t, backends sorted by I/O, aio rows)."""
        for i in reversed(range(len(self._backends))):
            self._backend_entry(i)
        return cast(list, self._backends)

    def _statement_entry(self, i: int) -> tuple | None:
        """_statements[i] decoded; None (and taken out) when its rows decode to none."""
        t, window, rows = self._statements[i]
        if isinstance(rows, Frame):
            if not rows.statements:
                del self._statements[i]
                return None
            self._statements[i] = (t, window, rows.statements)
        return self._statements[i]

    def _backend_entry(self, i: int) -> tuple | None:
        """_backends[i] decoded; None (and taken out) when its rows decode to none."""
        t, backends, _ = entry = self._backends[i]
        if isinstance(backends, Frame):
            if not (backends.backends or backends.aio):
                del self._backends[i]
                return None
            entry = self._backends[i] = (t, backends.backends, backends.aio)
        return entry

    # --- reading --------------------------------------------------------------------------------

    @property
    def end_t(self) -> float | None:
        return self.t[-1] if self.t else None

    def index_range(self, t0: float, t1: float) -> tuple[int, int]:
        """Indexes [i, j) of the ticks with t0 <= t <= t1."""
        return bisect_left(self.t, t0), bisect_right(self.t, t1)

    def window(self, metric: str, t0: float, t1: float) -> Window:
        i, j = self.index_range(t0, t1)
        col = self.series.get(metric)
        return Window(self.t[i:j], self.ticks[i:j], col[i:j] if col is not None else [None] * (j - i))

    def has(self, metric: str, t0: float | None = None, t1: float | None = None) -> bool:
        """Does the metric hold a value (in the window, when given)?"""
        col = self.series.get(metric)
        if col is None:
            return False
        i, j = (0, len(col)) if t0 is None else self.index_range(t0, t1 if t1 is not None else float("inf"))
        known = self._none_upto.get(metric, 0)  # col[:known] was seen to hold no value: not looked at again
        for k in range(max(i, known), j):
            if col[k] is not None:
                if i <= known:
                    self._none_upto[metric] = k
                return True
        if i <= known < j:
            self._none_upto[metric] = j
        return False

    def latest(self, metric: str, at: float | None = None) -> Any:
        """The metric at the last tick (at or before `at`); None when that tick lacked it."""
        col = self.series.get(metric)
        if not col:
            return None
        t = self.t
        j = len(t) if at is None or at >= t[-1] else bisect_right(t, at)
        return col[j - 1] if j else None

    def latest_sampled(self, metric: str, at: float | None = None) -> Any:
        """A wait sample's figure (sessions.*) at the last tick that took one, at or before `at`:
        with many processes pg_stat_activity is read every few ticks, and a tick between (the
        server answered, no sample) says nothing new. None past a tick the server did not answer."""
        col, answered = self.series.get(metric), self.series.get(M.OBSERVER_SERVER_MS)
        if not col or not answered:
            return None
        j = self.frame_index(at) + 1
        for k in range(j - 1, max(-1, j - 1 - SAMPLE_LOOKBACK), -1):
            if self.waits[k] is not None:
                return col[k]
            if answered[k] is None:
                return None
        return None

    def frame_index(self, at: float | None) -> int:
        """Index of the last tick at or before `at` (-1 when none)."""
        return (len(self.t) if at is None else bisect_right(self.t, at)) - 1

    def total(self, metric: str, t0: float, t1: float) -> float | None:
        """A per-second rate summed over the window (rate x tick length): e.g. buffers written."""
        w = self.window(metric, t0, t1)
        total, seen = 0.0, False
        for k in range(1, len(w.t)):
            v = w.v[k]
            if v is not None:
                total += float(v) * (w.t[k] - w.t[k - 1])
                seen = True
        return total if seen else None

    def statements_at(self, at: float | None = None) -> tuple[float, float | None, list[dict[str, Any]]] | None:
        """The latest statement window ending at or before `at`: (t, window s, rows)."""
        for i in reversed(range(len(self._statements))):
            if at is None or self._statements[i][0] <= at:
                entry = self._statement_entry(i)
                if entry is not None:
                    return entry
        return None

    def backends_at(self, at: float | None = None) -> tuple[float, list[dict[str, Any]], list] | None:
        """The latest tick with backends at or before `at` (None: the newest): (t, backends, aio)."""
        i = bisect_right([b[0] for b in self._backends], float("inf") if at is None else at)
        while i:
            i -= 1
            entry = self._backend_entry(i)
            if entry is not None:
                return entry
        return None

    def sources_summary(self, t0: float, t1: float) -> dict[str, dict[str, float]]:
        """pg_stat_io per backend type over the window: each field's mean per second (rate x tick
        length summed, over the window's length); types that did nothing are left out."""
        i, j = self.index_range(t0, t1)
        sums: dict[str, dict[str, float]] = {}
        for k in range(i + 1, j):  # each tick's rate covers the time since the one before (as total())
            dt = self.t[k] - self.t[k - 1]
            for btype, row in _part(self._sources, k, "sources").items():
                acc = sums.setdefault(btype, {})
                for fld, v in row.items():
                    acc[fld] = acc.get(fld, 0.0) + (v or 0.0) * dt
        span = self.t[j - 1] - self.t[i] if j - 1 > i else 0.0
        if span <= 0:
            return {}
        return {bt: {f: v / span for f, v in row.items()} for bt, row in sums.items() if any(row.values())}

    def io_summary(self, t0: float, t1: float) -> dict[tuple[str, str, str], dict[str, float | None]]:
        """pg_stat_io by row over the window: each operation's mean per second, and per timed
        operation its mean ms (`<op>_ms_per_op`) over the ticks its time was known (None if never:
        track_io_timing off). Rows that did nothing are left out."""
        i, j = self.index_range(t0, t1)
        span = self.t[j - 1] - self.t[i] if j - 1 > i else 0.0
        if span <= 0:
            return {}
        sums: dict[tuple, dict[str, float]] = {}
        for k in range(i + 1, j):
            dt = self.t[k] - self.t[k - 1]
            for key, row in _part(self._io, k, "io").items():
                acc = sums.setdefault(key, {})
                for op in IO_OPS:
                    acc[op] = acc.get(op, 0.0) + (row.get(op) or 0.0) * dt
                for op in TIMED_OPS:
                    ms = row.get(f"{op}_ms")
                    if ms is not None:  # time and count of the timed ticks only
                        acc[f"{op}_ms"] = acc.get(f"{op}_ms", 0.0) + ms * dt
                        acc[f"{op}_timed"] = acc.get(f"{op}_timed", 0.0) + (row.get(f"{op}s") or 0.0) * dt
        out: dict[tuple[str, str, str], dict[str, float | None]] = {}
        for key, acc in sums.items():
            if not any(acc[op] for op in IO_OPS):
                continue
            means: dict[str, float | None] = {op: acc[op] / span for op in IO_OPS}
            for op in TIMED_OPS:
                means[f"{op}_ms_per_op"] = per_op_ms(acc.get(f"{op}_ms"), acc.get(f"{op}_timed"))
            out[key] = means
        return out

    def spans_in(self, t0: float, t1: float) -> list[Span]:
        return [s for s in self.spans if s.start <= t1 and (s.end is None or s.end >= t0)]

    def events_in(self, t0: float, t1: float) -> list[TimedEvent]:
        return [e for e in self.events if t0 <= e.t <= t1]

    def waits_summary(self, t0: float, t1: float, top: int = 8) -> list[tuple[tuple[str, str, str], float, int]]:
        """Top wait events over the window: (backend type, wait type, event), mean sampled
        sessions per sampled tick, sessions at the last sampled tick. Sorted by the mean. Ticks
        without a wait sample (many processes: read every few ticks) count for nothing."""
        i, j = self.index_range(t0, t1)
        if j <= i:
            return []
        sums, sampled = self._waits_sums(i, j)
        if not sampled:
            return []
        last = next(w for k in range(j - 1, i - 1, -1) if (w := self.waits[k]) is not None)
        now: dict[tuple[str, str, str], int] = {}
        for bt, wt, ev, n in last:
            now[(bt, wt, ev)] = now.get((bt, wt, ev), 0) + n
        ranked = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return [(key, total / sampled, now.get(key, 0)) for key, total in ranked]

    def waits_sampled(self, t0: float, t1: float) -> tuple[int, int]:
        """(ticks with a wait sample, ticks the server answered) in the window: a tick it did not
        answer took no sample because none could be taken, not because of the stride."""
        i, j = self.index_range(t0, t1)
        if j <= i:
            return (0, 0)
        answered = self.series.get(M.OBSERVER_SERVER_MS)
        return self._waits_sums(i, j)[1], (j - i) - (answered[i:j].count(None) if answered else 0)

    def _waits_sums(self, i: int, j: int) -> tuple[dict[tuple[str, str, str], int], int]:
        """Sampled sessions per wait over ticks [i, j), and the ticks sampled. The window of the
        last call is updated by the ticks that entered and left it (counts are integers: the sums
        are exact), so a redraw costs the ticks since the previous one, not the whole window."""
        off, last, waits = self._trimmed, self._waits_window, self.waits
        try:
            if last is not None and off <= last[0] <= i + off <= last[1] <= j + off:
                counts, sampled = last[2], last[3]
                for k in range(last[1] - off, j):
                    sampled += _add_waits(counts, waits[k], 1)
                for k in range(last[0] - off, i):
                    sampled -= _add_waits(counts, waits[k], -1)
            else:
                counts, sampled = {}, 0
                for k in range(i, j):
                    sampled += _add_waits(counts, waits[k], 1)
        except _NotCounts:  # a count that is not an int (a crafted recording): summed afresh
            self._waits_window = None
            sums: dict[tuple[str, str, str], int] = {}
            for w in waits[i:j]:
                for bt, wt, ev, n in w or ():
                    key = (bt, wt, ev)
                    sums[key] = sums.get(key, 0) + n
            return sums, sum(w is not None for w in waits[i:j])
        self._waits_window = (i + off, j + off, counts, sampled)
        return {key: c[0] for key, c in counts.items()}, sampled


def _part(rows: list, k: int, name: str) -> Any:
    """rows[k]: a deferred Frame's part `name` decoded, and kept in its place, when first read."""
    row = rows[k]
    if isinstance(row, Frame):
        row = rows[k] = getattr(row, name)
    return row


class _NotCounts(Exception):
    """A wait count that is not an int: sums of it might not come out exactly the same in another order."""


def _add_waits(counts: dict[tuple[str, str, str], list[int]], waits: list | None, sign: int) -> int:
    """Add (sign 1) or take away (-1) one tick's waits: key -> [sessions, ticks with the key].
    Returns 1 for a tick with a wait sample, 0 for one without (waits None)."""
    if waits is None:
        return 0
    for bt, wt, ev, n in waits:
        if n.__class__ is not int:
            raise _NotCounts
        key = (bt, wt, ev)
        c = counts.get(key)
        if c is None:
            counts[key] = [n, 1]
        else:
            c[0] += sign * n
            c[1] += sign
            if not c[1]:
                del counts[key]
    return 1
