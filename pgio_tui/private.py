"""Files pgio-tui writes are its user's: recordings, experiment folders and reports hold host
names, settings, command lines and statement texts, so files are 0600 and folders 0700 whatever
the umask; another user shares them by being given a copy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_dir(path: str | os.PathLike) -> Path:
    """`path` (and missing parents) as a folder only its owner may list or enter."""
    p = Path(path)
    p.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    st = p.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{p} is not a folder")
    if stat.S_IMODE(st.st_mode) != DIR_MODE and st.st_uid == os.geteuid():
        os.chmod(p, DIR_MODE)
    return p


def write_text(path: str | os.PathLike, text: str) -> None:
    """`text` into `path`, 0600, replaced atomically (a crash leaves the old file or the new one).
    Only a regular file is replaced: never a device, a folder or what a symlink points to."""
    p = Path(path)
    if (p.exists() or p.is_symlink()) and not stat.S_ISREG(p.lstat().st_mode):
        raise FileExistsError(f"{p} is not a regular file: choose another name")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
