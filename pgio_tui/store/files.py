"""The recording file on disk: created exclusively with the owner's mode, replaced only when it
is a regular file, removed together with the files SQLite keeps beside it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pgio_tui.private import FILE_MODE
from pgio_tui.store.schema import RecordingError, RecordingExists


def create_file(p: Path, force: bool) -> None:
    """Create the file exclusively, so two recorders can never write the same file."""
    if p.is_dir():
        raise RecordingError(f"cannot create recording {p}: it is a directory")
    exists = RecordingExists(f"{p} already exists; use --force to overwrite it or choose another name")
    if p.exists() or p.is_symlink():
        if not force:
            raise exists
        check_replaceable(p)
        remove(p)
    try:
        # SQLite gives the -wal and -shm files the mode of the main file
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE))
    except FileExistsError:
        raise exists from None
    except OSError as e:
        raise RecordingError(f"cannot create recording {p}: {e.strerror}") from None


def check_replaceable(path: str | os.PathLike) -> None:
    """--force replaces a recording, never a device (/dev/null), a directory or a symlink."""
    for q in _siblings(Path(path)):
        if (q.exists() or q.is_symlink()) and not stat.S_ISREG(q.lstat().st_mode):
            raise RecordingError(f"{q} is not a regular file: --force replaces only recordings; "
                                 "choose another name")


def _siblings(path: Path) -> tuple[Path, ...]:
    """A recording file and the files SQLite keeps beside it."""
    return (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal"))


def remove(path: Path) -> None:
    for p in _siblings(path):
        p.unlink(missing_ok=True)
