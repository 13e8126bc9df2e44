"""Where /proc and /sys text comes from: this host's files, or the database host's through SQL.

The kernel and disk sources only ever ask a `ProcReader` for text, so the same parsers serve a
monitor running on the database host (`LocalProc`) and one connected from elsewhere (`RemoteProc`,
which reads the server's files with `pg_read_file` / `pg_ls_dir`).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import BinaryIO, Protocol

import psycopg


class ProcReader(Protocol):
    """Read-only access to a host's /proc and /sys. Every method returns None instead of raising."""

    label: str  # "local" or "remote": shown to the user, and says whether page size and realpath are known

    def read(self, path: str) -> str | None: ...

    def listdir(self, path: str) -> list[str] | None: ...

    def realpath(self, path: str) -> str | None: ...


class LocalProc:
    """The files of the host this process runs on."""

    label = "local"

    def read(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:  # missing, unreadable, or EOPNOTSUPP (PSI disabled)
            return None

    def listdir(self, path: str) -> list[str] | None:
        try:
            return os.listdir(path)
        except OSError:
            return None

    def realpath(self, path: str) -> str | None:
        try:
            return os.path.realpath(path, strict=True)
        except OSError:
            return None


LOCAL = LocalProc()
POLL_BUFFER = 65536  # one read() of a polled file; under malloc's mmap threshold, so no mmap per read


class PolledFiles:
    """Files of this host read every tick, kept open and read again from offset 0 (procfs makes
    their text anew at each read): a tick pays one pread() per file instead of open, read, close
    and a text decoder. Returns what LocalProc.read would."""

    def __init__(self) -> None:
        self._files: dict[str, BinaryIO] = {}

    def __call__(self, path: str) -> str | None:
        f = self._files.get(path)
        try:
            if f is None:
                f = self._files[path] = open(path, "rb", buffering=0)
            data = os.pread(f.fileno(), POLL_BUFFER, 0)
        except OSError:  # missing, unreadable, or EOPNOTSUPP (PSI disabled): tried again next time
            self._close(path)
            return None
        if len(data) == POLL_BUFFER:  # bigger than one read: the whole file, as LocalProc does
            return LOCAL.read(path)
        return data.decode("utf-8", "replace")

    def _close(self, path: str) -> None:
        f = self._files.pop(path, None)
        if f is not None:
            f.close()

    def close(self) -> None:
        for path in list(self._files):
            self._close(path)


def poller(reader: ProcReader) -> Callable[[str], str | None]:
    """A `read(path)` for the files a source reads every tick: kept open on this host (PolledFiles),
    the reader's own read anywhere else (through SQL, or a test's captured files)."""
    return PolledFiles() if type(reader) is LocalProc else reader.read


class PolledSource:
    """A source that reads its files every tick through `self._read` (poller of its reader); setting
    `reader` swaps both, and `close()` closes the files kept open."""

    _read: Callable[[str], str | None]  # set with the reader
    _files: PolledFiles | None = None  # the files _read keeps open, if it does

    @property
    def reader(self) -> ProcReader:
        return self._reader

    @reader.setter
    def reader(self, reader: ProcReader) -> None:
        self.close()
        self._reader = reader
        self._read = poller(reader)
        self._files = self._read if isinstance(self._read, PolledFiles) else None

    def close(self) -> None:
        """Close the files kept open (PolledFiles)."""
        if self._files is not None:
            self._files.close()


class RemoteProc:
    """The database host's files, read by the server itself (superuser or pg_read_server_files + EXECUTE).

    The connection must be in autocommit mode: a failed read is then just a failed statement, and no
    savepoint is needed. A path that fails for a reason that will not go away (missing file, no
    privilege, PSI disabled) is remembered and not asked for again, so the server log does not get
    an ERROR line per tick. Limits: `realpath` is impossible through SQL (no readlink function), so
    symlinks such as a relocated pg_wal cannot be followed remotely and paths are mapped to devices
    through the backend's /proc/self/mountinfo instead of stat(); page size is assumed to be 4 kB.
    Each read is one round trip.
    """

    label = "remote"

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self._failed: set[str] = set()

    @staticmethod
    def available(conn: psycopg.Connection) -> bool:
        """Whether this role may read the server's /proc through pg_read_file. Never raises."""
        try:
            row = conn.execute("SELECT pg_read_file('/proc/meminfo')").fetchone()
        except Exception:  # permission denied, no such function, not Linux, broken connection...
            return False
        return bool(row and row[0] and "MemTotal:" in row[0])

    def _query(self, sql: str, path: str) -> list[tuple] | None:
        if path in self._failed:
            return None
        try:
            return self.conn.execute(sql, (path,)).fetchall()
        except psycopg.Error as e:
            if not isinstance(e, psycopg.errors.QueryCanceled) and not self.conn.broken:
                self._failed.add(path)
            return None

    def read(self, path: str) -> str | None:
        # No length argument: without one pg_read_file reads to EOF; /proc files report size 0.
        rows = self._query("SELECT pg_read_file(%s)", path)
        return rows[0][0] if rows else None

    def listdir(self, path: str) -> list[str] | None:
        rows = self._query("SELECT pg_ls_dir(%s)", path)
        return None if rows is None else [r[0] for r in rows]

    def realpath(self, path: str) -> str | None:
        return None  # not possible through SQL; see the class docstring


def page_kb(reader: ProcReader) -> int:
    """Kernel page size in kB: known locally, assumed 4 kB remotely (x86-64 and most arm64 kernels)."""
    return os.sysconf("SC_PAGE_SIZE") // 1024 if reader.label == "local" else 4


def tablespace_dirs(datadir: str) -> list[str]:
    tbl = os.path.join(datadir, "pg_tblspc")
    try:
        return [os.path.realpath(os.path.join(tbl, n)) for n in os.listdir(tbl)]
    except OSError:
        return []


def same_cluster_locally(datadir: str | None, pg) -> bool:
    """Are we on the database host? Compare pg_control's system identifier with the local file.

    Without rights to read it, fall back to: connected over a unix socket or loopback.
    """
    try:
        sysid = pg.conn.execute("SELECT system_identifier FROM pg_control_system()").fetchone()[0]
    except Exception:
        sysid = None
    if datadir and sysid is not None:
        try:
            with open(os.path.join(datadir, "global", "pg_control"), "rb") as fh:
                return struct.unpack("<Q", fh.read(8))[0] == sysid
        except OSError:
            pass
    host = pg.conn.info.host or ""
    return host.startswith("/") or host in ("localhost", "127.0.0.1", "::1")
