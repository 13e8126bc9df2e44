"""A folder of rotated recordings (`record --rotate`, store/rotation.py) read as one recording.

`Timeline` answers what replay, export and the moments ask of a `Recording` (rows, frames, events,
checkpoints, settings, tick_at, refresh) over every file in the folder, in time order, so the
player and the TUI need not know there are several. Tick numbers are the timeline's: a file
written by the same process continues the sampler's numbers (no offset); after a restart, the
numbers of the next file are moved past the previous file's by the time between them, so the
restart shows as the gap it was. Only the first file's `start` event and the last file's `stop`
are kept (a rotation is no event), and a file closed by rotation never ends a followed replay.

The newest file is followed while it is written (refresh() reads its new ticks, then any newer
file); a file that cannot be read is left out with a note (`note`), unless it is the newest, which
may just be being created and is tried again at the next refresh().
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pgio_tui.frame import Frame
from pgio_tui.store.reader import IoBytes, Recording, RecordingError, Setting, TickEvent
from pgio_tui.store.rotation import ROTATED, rotated_starts

MAX_FILES = 400  # each open file holds a descriptor: 16 days of hourly files; beyond, a window (--from/--to)


class _Part:
    """One file of the timeline: a Recording that holds ticks (refresh() keeps no other, so its
    first and last ticks and times are known) and the offset added to its tick numbers."""

    __slots__ = ("rec", "offset", "local_first", "start_t")

    def __init__(self, rec: Recording, offset: int = 0):
        assert rec.first_tick is not None and rec.start_t is not None, "a part holds ticks"
        self.rec, self.offset = rec, offset
        self.local_first: int = rec.first_tick  # set once, with the first tick
        self.start_t: float = rec.start_t

    @property
    def local_last(self) -> int:
        """The file's last tick (its own number): it grows while the file is written, never unset."""
        last = self.rec.last_tick
        assert last is not None, "set with the first tick, which a part holds"
        return last

    @property
    def end_t(self) -> float:
        end = self.rec.end_t
        assert end is not None, "set with the first tick, which a part holds"
        return end

    @property
    def first(self) -> int:
        return self.local_first + self.offset

    @property
    def last(self) -> int:
        return self.local_last + self.offset


class Timeline:
    """The rotated recordings in `folder` whose periods overlap [start_t, end_t] (all when None)."""

    def __init__(self, folder: str | os.PathLike, start_t: float | None = None, end_t: float | None = None):
        self.path = Path(folder)
        if not self.path.is_dir():
            raise RecordingError(f"{self.path} is not a folder")
        self._window = (start_t, end_t)
        self._parts: list[_Part] = []
        self._skipped: set[str] = set()
        self._notes: list[str] = []
        self.refresh()
        if not self._parts:
            self.close()
            where = " in that window" if start_t is not None or end_t is not None else ""
            raise RecordingError(f"{self.path}: no recording with ticks{where} (`record --rotate` writes "
                                 "one file per period here, named by its UTC start time)")

    # --- the files ------------------------------------------------------------------------------

    def _candidates(self) -> list[Path]:
        files = rotated_starts(self.path)
        lo, hi = self._window
        keep = []
        for i, (start, p) in enumerate(files):
            end = files[i + 1][0] if i + 1 < len(files) else None
            if (hi is None or start <= hi) and (lo is None or end is None or end > lo):
                keep.append(p)
        if len(keep) > MAX_FILES:
            if lo is not None or hi is not None:
                raise RecordingError(f"{self.path}: {len(keep)} recordings in that window; give a shorter one "
                                     f"(at most {MAX_FILES} files)")
            if not self._parts and not self._notes:
                self._notes.append(f"the newest {MAX_FILES} of {len(keep)} files (--from/--to for older ones)")
            keep = keep[-MAX_FILES:]
        return keep

    def refresh(self) -> int:
        """Read what the newest file gained and any newer file; returns how many ticks are new."""
        new = 0
        if self._parts:
            new += self._parts[-1].rec.refresh()
        known = {p.rec.path.name for p in self._parts} | self._skipped
        last_name = self._parts[-1].rec.path.name if self._parts else ""
        files = [p for p in self._candidates() if p.name not in known and p.name > last_name]
        for i, path in enumerate(files):
            newest = i == len(files) - 1
            try:
                rec = Recording(path)
            except RecordingError as exc:
                if newest:
                    break  # perhaps being created: tried again next time
                self._skip(path, str(exc))
                continue
            if rec.last_tick is None:
                rec.close()
                if newest:
                    break
                self._skip(path, f"{path.name} holds no ticks")
                continue
            if self._parts:
                new += self._parts[-1].rec.refresh()  # its last commits, made before this file began
            part = _Part(rec)
            part.offset = self._offset(part)
            self._parts.append(part)
            new += rec.tick_count
        return new

    def _skip(self, path: Path, why: str) -> None:
        self._skipped.add(path.name)
        self._notes.append(why)

    def _offset(self, part: _Part) -> int:
        if not self._parts:
            return 0
        prev, rec = self._parts[-1], part.rec
        if part.local_first > prev.local_last:  # the same sampler went on: its numbers, gaps and all
            return prev.offset
        interval = rec.meta.get("interval_s")  # an untrusted file's: a number in range, or 1 s
        interval = float(interval) if isinstance(interval, (int, float)) and 0.01 <= interval <= 3600 else 1.0
        ticks = max(1, round((part.start_t - prev.end_t) / interval))
        return prev.last + ticks - part.local_first

    @property
    def parts(self) -> list[_Part]:
        """The files read, oldest first: `rec` (the Recording) and `offset` (added to its ticks)."""
        return list(self._parts)

    @property
    def files(self) -> list[Path]:
        return [p.rec.path for p in self._parts]

    @property
    def note(self) -> str | None:
        return "; ".join(self._notes) or None

    # --- what a Recording tells -----------------------------------------------------------------

    @property
    def meta(self) -> dict[str, Any]:
        return self._parts[0].rec.meta

    @property
    def first_tick(self) -> int:
        return self._parts[0].first

    @property
    def last_tick(self) -> int:
        return self._parts[-1].last

    @property
    def start_t(self) -> float:
        return self._parts[0].start_t

    @property
    def end_t(self) -> float:
        return self._parts[-1].end_t

    @property
    def tick_count(self) -> int:
        return sum(p.rec.tick_count for p in self._parts)

    @property
    def duration(self) -> float:
        return self.end_t - self.start_t

    @property
    def devices(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for p in self._parts:
            out.update(p.rec.devices)
        return out

    def metric_names(self) -> list[str]:
        out: dict[str, None] = {}
        for p in self._parts:
            out.update(dict.fromkeys(p.rec.metric_names()))
        return list(out)

    def knows(self, name: str) -> bool:
        return any(p.rec.knows(name) for p in self._parts)

    def _part_at(self, tick: int) -> _Part:
        i = bisect_right([p.first for p in self._parts], tick) - 1
        return self._parts[max(0, i)]

    def _spans(self, start: int | None, end: int | None) -> Iterator[tuple[_Part, int | None, int | None]]:
        """The parts overlapping [start, end] (global ticks) with the local bounds to read."""
        for p in self._parts:
            if (start is not None and p.last < start) or (end is not None and p.first > end):
                continue
            yield (p, None if start is None else max(start - p.offset, p.local_first),
                   None if end is None else min(end - p.offset, p.local_last))

    def settings(self, tick: int | None = None) -> dict[str, Setting]:
        p = self._part_at(self.last_tick if tick is None else tick)
        return p.rec.settings(None if tick is None else tick - p.offset)

    def events(self, kinds: Iterable[str] | None = None) -> list[TickEvent]:
        out = []
        kinds = None if kinds is None else tuple(kinds)
        last = len(self._parts) - 1
        for i, p in enumerate(self._parts):
            if kinds == ("stop",) and i < last:  # a followed replay asks this at every poll
                continue
            for e in p.rec.events(kinds):
                if self._kept(i, e.event):
                    out.append(e if e.tick is None else e._replace(tick=e.tick + p.offset))
        return out

    def _kept(self, i: int, event) -> bool:
        """A rotation is no event: the first file's start and the last one's stop are the timeline's."""
        if event.kind == "start":
            return i == 0
        return event.kind != "stop" or (i == len(self._parts) - 1 and event.text != ROTATED)

    def checkpoints(self) -> list[dict[str, Any]]:
        out = []
        for p in self._parts:
            for c in p.rec.checkpoints():
                for k in ("start_tick", "end_tick"):
                    if isinstance(c.get(k), int):
                        c[k] += p.offset
                out.append(c)
        return out

    def workloads(self) -> list[dict[str, Any]]:
        return [w for p in self._parts for w in p.rec.workloads()]

    def latency_histogram(self, start_tick: int | None = None, end_tick: int | None = None):
        from pgio_tui.quantiles import LatencyHistogram
        hist = LatencyHistogram()
        tops = []
        for p, a, b in self._spans(start_tick, end_tick):
            h = p.rec.latency_histogram(a, b)
            hist.merge(h.buckets)
            tops.append(h.max_ms)
        tops = [m for m in tops if m is not None]
        hist.max_ms = max(tops) if tops and hist.count else None
        return hist

    def io_bytes(self, devices: Iterable[str], start_tick: int | None = None,
                 end_tick: int | None = None) -> IoBytes | None:
        devices = list(devices)
        parts = [b for p, lo, hi in self._spans(start_tick, end_tick) if (b := p.rec.io_bytes(devices, lo, hi))]
        if not parts:
            return None
        return IoBytes(sum(b.own_read for b in parts), sum(b.own_written for b in parts),
                       {d: (sum(b.devices[d][0] for b in parts), sum(b.devices[d][1] for b in parts))
                        for d in parts[0].devices})

    def tick_dts(self, start_tick: int | None = None, end_tick: int | None = None) -> dict[int, float]:
        return {tick + p.offset: dt for p, a, b in self._spans(start_tick, end_tick)
                for tick, dt in p.rec.tick_dts(a, b).items()}

    def ticks_with(self, backend_type: str, start_tick: int | None = None, end_tick: int | None = None) -> set[int]:
        return {tick + p.offset for p, a, b in self._spans(start_tick, end_tick)
                for tick in p.rec.ticks_with(backend_type, a, b)}

    def tick_at(self, t: float) -> int:
        i = bisect_right([p.start_t for p in self._parts], t) - 1
        p = self._parts[max(0, i)]
        return p.rec.tick_at(t) + p.offset

    def tick_before(self, tick: int) -> int | None:
        """The last tick before `tick`, in the newest file that has one."""
        part = next((p for p in reversed(self._parts) if p.first < tick), None)
        found = None if part is None else part.rec.tick_before(min(tick - part.offset, part.local_last + 1))
        return None if part is None or found is None else found + part.offset

    def tick_after(self, tick: int) -> int | None:
        """The first tick after `tick`, in the oldest file that has one."""
        part = next((p for p in self._parts if p.last > tick), None)
        found = None if part is None else part.rec.tick_after(max(tick - part.offset, part.local_first - 1))
        return None if part is None or found is None else found + part.offset

    def rows(self, metrics: list[str], start_tick: int | None = None,
             end_tick: int | None = None) -> Iterator[tuple]:
        """(tick, t, elapsed, *values) as Recording.rows(); a metric a file lacks is None there."""
        for p, a, b in self._spans(start_tick, end_tick):
            known = [m for m in metrics if p.rec.knows(m)]
            if not known and metrics:
                for tick, t, elapsed in p.rec.rows([], a, b):
                    yield (tick + p.offset, t, elapsed, *(None,) * len(metrics))
                continue
            where = [known.index(m) if m in known else None for m in metrics]
            for tick, t, elapsed, *vals in p.rec.rows(known, a, b):
                yield (tick + p.offset, t, elapsed, *(None if i is None else vals[i] for i in where))

    def series(self, metric: str, start_tick: int | None = None,
               end_tick: int | None = None) -> list[tuple[int, float, Any]]:
        return [(tick, t, v) for tick, t, _, v in self.rows([metric], start_tick, end_tick)]

    def frames(self, start_tick: int | None = None, end_tick: int | None = None, *,
               deferred: bool = False) -> Iterator[Frame]:
        for p, a, b in self._spans(start_tick, end_tick):
            i = self._parts.index(p)
            for f in p.rec.frames(a, b, deferred=deferred):
                f.tick += p.offset
                f.events = [e for e in f.events if self._kept(i, e)]
                yield f

    def statement_texts(self) -> dict[int, str]:
        out: dict[int, str] = {}
        for p in self._parts:
            out.update(p.rec.statement_texts())
        return out

    def frame(self, tick: int) -> Frame:
        for f in self.frames(tick, tick):
            return f
        raise KeyError(f"no tick {tick} in {self.path}")

    # --- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        for p in self._parts:
            p.rec.close()

    def __enter__(self) -> Timeline:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_recording(path: str | os.PathLike, start_t: float | None = None, end_t: float | None = None, *,
                   lazy: bool = False) -> Recording | Timeline:
    """A recording file, or a folder of rotated ones as a Timeline. `lazy` (replay): a file's ticks
    are checked as they are read (Recording); a folder's files, each an hour or so, are checked at open."""
    return Timeline(path, start_t, end_t) if os.path.isdir(path) else Recording(path, lazy=lazy)


def tick_window(rec: Recording | Timeline, from_t: float | None, to_t: float | None) -> tuple[int | None, int | None]:
    """The ticks taken in [from_t, to_t] as (start_tick, end_tick) for rows()/frames(); None: that
    end open. RecordingError when the window holds no tick."""
    if from_t is None and to_t is None:
        return None, None
    first_tick, last_tick, t0, t1 = rec.first_tick, rec.last_tick, rec.start_t, rec.end_t
    if first_tick is None or last_tick is None or t0 is None or t1 is None:
        raise RecordingError(f"{rec.path} holds no ticks")
    start = end = None
    if from_t is not None:
        start = rec.tick_at(from_t)
        first = next(iter(rec.rows([], start, start)), None)
        if first is None or first[1] < from_t:
            start += 1
    if to_t is not None:
        end = rec.tick_at(to_t)
        if end == first_tick and t0 > to_t:
            end -= 1
    if (start is not None and start > last_tick) or (end is not None and end < (start or first_tick)):
        raise RecordingError(f"{rec.path}: no tick in that window (it holds {_when(t0)} to {_when(t1)})")
    return start, end


def _when(t: float) -> str:
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


_NOT_COPIED = {"schema_version", "tool_version", "scales", "sqlite", "created_at"}


def copy_window(rec: Recording | Timeline, path: str | os.PathLike, start_tick: int | None = None,
                end_tick: int | None = None) -> int:
    """A new recording at `path` holding ticks [start_tick, end_tick] of `rec` (a Timeline's window
    becomes one file for diff and report): its meta, the settings in force at the start, then the
    Frames as recorded. Returns the ticks copied."""
    from pgio_tui.store.writer import Recorder
    first = rec.first_tick if start_tick is None else start_tick
    meta = {k: v for k, v in rec.meta.items() if k not in _NOT_COPIED}
    n = 0
    with Recorder(path, meta=meta) as out:
        out.set_settings((s.name, s.value, s.unit, s.category or "postgres") for s in rec.settings(first).values())
        for frame in rec.frames(start_tick, end_tick):
            out.write(frame)
            n += 1
    return n
