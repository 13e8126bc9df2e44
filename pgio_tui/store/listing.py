"""A folder of recordings at a glance: what `pgio-tui replay` with no FILE offers to open.

Textual-free. Each file is opened read-only just long enough to read its span, host and workload;
a file that is not a recording is listed with the reason instead of being skipped silently.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from pgio_tui.store.reader import Recording, RecordingError

SUFFIXES = (".pgio", ".sqlite", ".sqlite3", ".db")


class RecordingInfo(NamedTuple):
    path: Path
    size: int
    start_t: float | None
    duration: float | None
    host: str
    workload: str
    error: str  # "" for a readable recording


def describe(path: Path) -> RecordingInfo:
    size = path.stat().st_size
    try:
        with Recording(path) as rec:
            kinds = [str(w.get("kind") or "") for w in rec.workloads()]
            return RecordingInfo(path, size, rec.start_t, rec.duration if rec.start_t is not None else None,
                                 str(rec.meta.get("host") or ""), ", ".join(k for k in kinds if k), "")
    except RecordingError as exc:
        return RecordingInfo(path, size, None, None, "", "", str(exc).replace(str(path), "").strip(" :") or str(exc))


def list_recordings(folder: str | os.PathLike) -> list[RecordingInfo]:
    """Recordings in `folder` (not recursive), newest first; RecordingError when there is none."""
    root = Path(folder)
    files = [p for p in root.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES] if root.is_dir() else []
    if not files:
        raise RecordingError(f"no recordings in {root}/ (files ending in {', '.join(SUFFIXES)}); "
                             "give a FILE, or record one with `pgio-tui record -o FILE`")
    infos = [describe(p) for p in files]
    infos.sort(key=lambda i: (i.start_t is None, -(i.start_t or 0), i.path.name))
    return infos
