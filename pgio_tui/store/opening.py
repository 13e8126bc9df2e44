"""Opening a recording: read-only, checked to be one of ours, older schemas migrated in memory.

Apart from the reader so the checks a file passes before anything is read stay in one short place;
the file itself is never written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pgio_tui.store import schema
from pgio_tui.store.schema import RecordingError
from pgio_tui.store.validate import BoundedConnection
from pgio_tui.store.validate import schema_version as validate_version


def open_read_only(path: Path) -> BoundedConnection:
    """The file as a read-only, bounded SQLite connection; RecordingError when it is not one."""
    uri = path.absolute().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, factory=BoundedConnection)
        conn.label = str(path)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except RecordingError as e:
        if "not a database" in str(e):
            raise RecordingError(f"{path} is not a pgio-tui recording (not an SQLite file)") from None
        raise
    except sqlite3.DatabaseError as e:
        raise RecordingError(f"cannot open recording {path}: {e}") from None


def schema_version_of(conn: sqlite3.Connection, path: Path) -> int:
    """The recording's schema version; RecordingError when the file is not a pgio-tui recording."""
    not_ours = RecordingError(f"{path} is an SQLite file but not a pgio-tui recording")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables and path.stat().st_size == 0:
        raise RecordingError(f"{path} is empty, not a pgio-tui recording")
    if not {"meta", "ticks"} <= tables:
        raise not_ours
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise not_ours
    return validate_version(row[0], str(path))


def migrated_copy(conn: BoundedConnection, version: int) -> BoundedConnection:
    """An older file, migrated in memory: the file itself is never written."""
    mem = sqlite3.connect(":memory:", factory=BoundedConnection)
    mem.label = conn.label
    conn.backup(mem)
    conn.close()
    schema.migrate(mem, version)
    mem.commit()
    return mem
