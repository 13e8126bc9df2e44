"""The always-on recorder's folder: one recording per period, named by the UTC time of its first
tick (`20261127T030000Z.pgio`), the oldest removed past the retention.

`RotatingRecorder` stands where a `Recorder` does (the Session writes Frames to it): at the first
tick of a new period it closes the file (a complete recording, its WAL folded in) and opens the
next, on the same thread, so the sampler's tick numbers and times run on without a seam. Periods
are aligned to the epoch (1h: whole UTC hours, 1d: UTC midnight). Only files with such names are
ever removed, and never the one being written. `store/timeline.py` reads the folder back as one.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pgio_tui.frame import Frame
from pgio_tui.store.files import remove
from pgio_tui.store.schema import RecordingError

if TYPE_CHECKING:  # the writer (and sqlite-utils, ~40 ms) is imported by the recorder that writes, not by replay
    from pgio_tui.store.writer import Recorder

SUFFIX = ".pgio"
NAME = re.compile(r"(\d{8}T\d{6}Z)(?:-(\d{1,3}))?\.pgio")
ROTATED = "rotated"  # the stop reason of a file closed because its period ended
DIR_MODE = 0o700
MIN_ROTATE_S = 1.0  # tests rotate every few seconds; a service every hour or day

# PostgreSQL's units, 1024-based, as os.page_cache takes them (experiments/page_cache.py)
@dataclass(frozen=True)
class Rotation:
    """A new file every `every_s` seconds; files whose period ended more than `keep_s` ago are
    removed, and the oldest while the folder holds more than `keep_bytes` (None: no such limit)."""

    every_s: float
    keep_s: float | None = None
    keep_bytes: int | None = None

    def next_boundary(self, t: float) -> float:
        return (math.floor(t / self.every_s) + 1) * self.every_s


def file_name(t: float, n: int = 0) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t)) + (f"-{n}" if n else "") + SUFFIX


def name_time(path: str | os.PathLike) -> float | None:
    """The UTC time a rotated file's name gives (its first tick, to the second); None: not one."""
    m = NAME.fullmatch(Path(path).name)
    if not m:
        return None
    import calendar  # here: replay of one file never needs it (its import was ~0.9 ms of the first frame)

    try:
        return float(calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%SZ")))
    except (ValueError, OverflowError):
        return None


def rotated_files(folder: str | os.PathLike) -> list[Path]:
    """The folder's rotated recordings, oldest first (their names sort by time)."""
    return [p for _, p in rotated_starts(folder)]


def rotated_starts(folder: str | os.PathLike) -> list[tuple[float, Path]]:
    """(start time its name gives, path) of the folder's rotated recordings, oldest first."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = [(t, _number(n), n) for n in names if NAME.fullmatch(n) and (t := name_time(n)) is not None]
    return [(t, Path(folder) / n) for t, _, n in sorted(found)]


def _number(name: str) -> int:
    m = NAME.fullmatch(name)
    return int(m.group(2) or 0) if m else 0


def is_rotation_folder(path: str | os.PathLike) -> bool:
    return os.path.isdir(path) and bool(rotated_files(path))


def _size(p: Path) -> int:
    total = 0
    for q in (p, Path(f"{p}-wal")):
        try:
            total += q.stat().st_size
        except OSError:
            pass
    return total


def expired(files: list[Path], rotation: Rotation, now: float) -> list[Path]:
    """The files retention removes, oldest first; never the newest (the one being written). A file
    ends where the next one begins (its name)."""
    out: list[Path] = []
    old = files[:-1]
    if rotation.keep_s is not None:
        for p, nxt in zip(old, files[1:]):
            end = name_time(nxt)
            if end is not None and end <= now - rotation.keep_s:
                out.append(p)
    if rotation.keep_bytes is not None:
        left = [p for p in files if p not in out]
        total = sum(map(_size, left))
        for p in left[:-1]:
            if total <= rotation.keep_bytes:
                break
            total -= _size(p)
            out.append(p)
    return sorted(out, key=files.index)


def prune(folder: Path, rotation: Rotation, now: float) -> list[Path]:
    """Remove the expired files (with SQLite's files beside them); returns them."""
    gone = expired(rotated_files(folder), rotation, now)
    for p in gone:
        remove(p)
    return gone


def prepare_folder(folder: str | os.PathLike) -> Path:
    """The folder, created private when missing; RecordingError when it cannot be written."""
    p = Path(folder)
    if p.exists() and not p.is_dir():
        raise RecordingError(f"{p} is not a folder: --rotate writes one recording per period into a folder")
    try:
        p.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except OSError as e:
        raise RecordingError(f"cannot create {p}: {e.strerror}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise RecordingError(f"cannot write into {p}")
    return p


class RotatingRecorder:
    """A Recorder that starts a new file each period in a folder and applies the retention.
    `settings` gives the settings snapshot each new file starts with (the current ones)."""

    def __init__(self, folder: str | os.PathLike, rotation: Rotation, *, meta: dict[str, Any] | None = None,
                 settings: Callable[[], Iterable[tuple]] = list, now: Callable[[], float] = time.time):
        if rotation.every_s < MIN_ROTATE_S:
            raise RecordingError(f"--rotate: at least {MIN_ROTATE_S:g} s")
        self.folder = prepare_folder(folder)
        self.rotation = rotation
        self.removed: list[Path] = []  # files the retention removed, oldest first
        self._meta = dict(meta or {})
        self._settings = settings
        self._now = now
        self.current: Recorder | None = None
        self._open(now())

    @property
    def path(self) -> Path:
        return self.current.path if self.current is not None else self.folder

    def _open(self, t: float) -> Recorder:
        for n in range(1000):  # a restart within the same second
            path = self.folder / file_name(t, n)
            if not path.exists():
                break
        else:
            raise RecordingError(f"cannot create a recording in {self.folder}: every name for {file_name(t)} taken")
        from pgio_tui.store.writer import Recorder

        rec = Recorder(path, meta=self._meta)
        try:
            rec.set_settings(list(self._settings()))
        except RecordingError:
            rec.close("error")
            raise
        self.current = rec
        self._next = self.rotation.next_boundary(t)
        self.removed += prune(self.folder, self.rotation, self._now())
        return rec

    def write(self, frame: Frame) -> None:
        current = self.current
        if current is None or frame.t >= self._next:  # None: the last period's file could not be opened
            if current is not None:
                current.close(ROTATED, t=frame.t)
                self.current = None
            current = self._open(frame.t)
        current.write(frame)

    def close(self, reason: str = "", *, t: float | None = None) -> None:
        if self.current is not None:
            self.current.close(reason, t=t)

    def __getattr__(self, name: str):  # set_meta, set_settings, flush, workload_*: the current file's
        if name.startswith("_") or name == "current":
            raise AttributeError(name)
        return getattr(self.current, name)
