"""What a recording must look like before it is read, and how values are read from it.

Recordings are files people attach to tickets and send each other, so the reader treats them as
hostile: on open the file may hold only the objects store/schema.py creates (its tables, indexes and
views, with their columns and types: no triggers, no other views, no generated columns), every query is bounded in time
(an SQLite progress handler) and every value in size, an SQLite error becomes one RecordingError
line, and values come back as the type their column promises (a non-finite number, a blob or text
in a numeric column is missing, never a crash downstream).
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

from pgio_tui.quantiles import MAX_BUCKET, MAX_COUNT
from pgio_tui.safe_text import LABEL_CHARS, LINE_CHARS, capped
from pgio_tui.store import schema
from pgio_tui.store.schema import RecordingError

# One query, or one step of a streamed one, may run this long: far beyond any legitimate query on a
# day-long recording (the schema check already refuses views and triggers, the usual way to hang).
QUERY_S = 15.0
MAX_VALUE_BYTES = 16 << 20  # the largest text or blob SQLite hands back
PROGRESS_STEPS = 20_000  # SQLite VM instructions between two checks of the clock
# No metric comes near this (a petabyte in kB is 1e12); sums and squares of such values stay finite.
MAX_MAGNITUDE = 1e18
T_MIN, T_MAX = 0.0, 4_102_444_800.0  # a tick's wall time lies in 1970..2100
TEXT_TYPES = ("TEXT",)
# latency_hist rows the code can compute with (quantiles.bucket_value overflows far beyond): others are damage
HIST_ROWS = (f"typeof(bucket) = 'integer' AND bucket BETWEEN 0 AND {MAX_BUCKET} "
             f"AND typeof(count) = 'integer' AND count BETWEEN 1 AND {MAX_COUNT}")
# meta keys that hold a number or a JSON object; other keys hold text
META_NUMBERS = {"schema_version", "interval_s", "server_version_num"}
META_OBJECTS = {"features", "scales"}  # as Sampler.meta() and the Recorder write them
META_LABELS = {"host", "port", "server_version", "os", "tool_version", "python", "sqlite"}  # label_text()


# --- a connection whose every query is bounded and whose errors are one line ------------------

class BoundedCursor(sqlite3.Cursor):
    """Fetching restarts the query's clock (a streamed export is many short steps) and turns any
    SQLite error into a RecordingError naming the file."""

    def _guard(self, fetch, *args):
        conn = cast(BoundedConnection, self.connection)  # BoundedConnection.cursor() made this cursor
        conn.deadline = time.monotonic() + QUERY_S
        try:
            return fetch(*args)
        except sqlite3.Error as e:
            raise conn.error(e) from None

    def execute(self, sql, params=()):
        self._guard(super().execute, sql, params)
        return self

    def fetchone(self):
        return self._guard(super().fetchone)

    def fetchall(self):
        return self._guard(super().fetchall)

    def fetchmany(self, size=1):
        return self._guard(super().fetchmany, size)

    def __next__(self):
        return self._guard(super().__next__)


class BoundedConnection(sqlite3.Connection):
    """sqlite3.connect(..., factory=BoundedConnection): queries time out after QUERY_S, values
    are capped at MAX_VALUE_BYTES, errors are RecordingError("FILE: ...")."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.label = str(args[0]) if args else "recording"
        self.deadline = time.monotonic() + QUERY_S
        self.set_progress_handler(self._too_long, PROGRESS_STEPS)
        self.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)

    def _too_long(self) -> int:
        return 1 if time.monotonic() > self.deadline else 0

    def error(self, e: sqlite3.Error) -> RecordingError:
        text = str(e)
        if "interrupted" in text:
            text = f"a query ran longer than {QUERY_S:g} s: the file is damaged or crafted"
        elif "too big" in text:
            text = f"a value is larger than {MAX_VALUE_BYTES >> 20} MB: the file is damaged or crafted"
        elif "malformed" in text or "not a database" in text:
            text = f"the file is damaged ({text}): a copy made without its -wal file, or a truncated one"
        return RecordingError(f"{self.label}: cannot be read: {text}")

    def cursor(self, factory=BoundedCursor):
        return super().cursor(factory)

    def execute(self, sql, params=()):
        return self.cursor().execute(sql, params)


# --- what the file on disk says before SQLite reads it -------------------------------------------

def file_problem(path: Path) -> tuple[str | None, str | None]:
    """(error, note) from the SQLite header: an error when the file is shorter than the header says
    (truncated: its end is missing), a note when it was written in WAL mode, never closed, and has
    no -wal file beside it (a copy taken while recording or after a crash: the last seconds, since
    the writer's last checkpoint, are missing)."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
        size = path.stat().st_size
    except OSError:
        return None, None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\0"):
        return None, None
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the in-header size is valid when these counters agree
    wal = Path(f"{path}-wal")
    in_wal = head[18] == 2 and wal.exists() and wal.stat().st_size > 0
    if in_wal:  # the newest pages are in the -wal: the main file may be short, SQLite reads both
        return None, None
    if valid and pages and size < page * pages:
        return (f"{path}: the file is truncated ({size:,} of {page * pages:,} bytes): its end is missing; "
                "copy it again in full"), None
    if head[18] == 2:  # WAL mode, never closed, and no (or an empty: a reader may leave one) -wal
        return None, ("no -wal file beside it and not closed cleanly: a copy taken while recording or after "
                      "a crash; the last seconds (after the writer's last checkpoint, every "
                      "~10 s) are missing")
    return None, None


# --- the objects a recording may hold -----------------------------------------------------------

@functools.lru_cache(maxsize=1)
def expected_objects() -> dict[tuple[str, str], tuple[str | None, dict[str, str]]]:
    """(type, name) -> (sql, {column: type}) of every object schema.create() makes: derived from
    the schema module itself, so a table added there is expected here with no second edit."""
    out = _objects_of(schema.create)
    out.update(schema.LEGACY_OBJECTS)
    return out


@functools.lru_cache(maxsize=1)
def objects_before_3() -> dict[tuple[str, str], tuple[str | None, dict[str, str]]]:
    """The objects schema 3 changed, as files of schema 1-2 hold them (schema.BEFORE_3_DDL)."""
    return {k: v for k, v in _objects_of(lambda mem: mem.executescript(schema.BEFORE_3_DDL)).items()
            if k[1] in ("disk", "disk_named")}


@functools.lru_cache(maxsize=None)
def objects_as_rates(table: str) -> dict[tuple[str, str], tuple[str | None, dict[str, str]]]:
    """A table and its view as files written before the counts over the tick hold them (schema.RATES_DDL)."""
    def make(mem: sqlite3.Connection) -> None:
        schema.create(mem)  # the tables its view reads
        mem.executescript(f"DROP VIEW {table}_named; DROP TABLE {table}; {schema.RATES_DDL[table][0]}")

    return {k: v for k, v in _objects_of(make).items() if k[1] in (table, f"{table}_named")}


def _objects_of(make) -> dict[tuple[str, str], tuple[str | None, dict[str, str]]]:
    mem = sqlite3.connect(":memory:")
    make(mem)
    out = {}
    for type_, name, sql in mem.execute("SELECT type, name, sql FROM sqlite_master"):
        cols = {r[1]: r[2].upper() for r in mem.execute(f"PRAGMA table_info({schema.quote(name)})")}
        out[(type_, name)] = (sql, cols)
    mem.close()
    return out


def check_objects(conn: sqlite3.Connection, label: str, complete: bool, version: int = schema.SCHEMA_VERSION) -> None:
    """Refuse a file holding anything schema.create() does not make (triggers, other views, unknown
    tables), a view or index whose SQL differs, or a table with other columns or types (a file of an
    older schema `version`: as that schema made them). With complete=True (the current schema
    version, or migrated to it) every expected table must be there too."""
    want = expected_objects() if version >= 3 else {**expected_objects(), **objects_before_3()}
    for table, (_ddl, columns) in schema.RATES_DDL.items():
        if set(columns) <= set(schema.table_columns(conn, table)):
            want = {**want, **objects_as_rates(table)}
    seen = set()
    for type_, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall():
        key = (type_, name)
        if type_ == "table" and name.startswith("sqlite_stat"):  # ANALYZE's statistics: harmless
            continue
        if key not in want:
            what = f"a {type_} {name!r}" if type_ in ("table", "view", "trigger", "index") else f"an object {name!r}"
            raise RecordingError(f"{label}: holds {what} that pgio-tui recordings never have: refused")
        if type_ in ("view", "index", "trigger") and sql != want[key][0]:
            raise RecordingError(f"{label}: the {type_} {name!r} is not the one pgio-tui makes: refused")
        if type_ == "table":
            _check_columns(conn, label, name, want[key][1])
        seen.add(key)
    if complete:
        missing = sorted(name for (type_, name) in want if type_ == "table" and (type_, name) not in seen
                         and name not in schema.OPTIONAL_TABLES)  # added later without a version bump
        if missing:
            raise RecordingError(f"{label}: cannot be read as a pgio-tui recording: it lacks the table(s) "
                                 f"{', '.join(missing)} (damaged, or cut short)")


def _check_columns(conn: sqlite3.Connection, label: str, table: str, want: dict[str, str]) -> None:
    # table_xinfo lists generated columns too (table_info hides them); `SELECT *` would evaluate them
    info = conn.execute(f"PRAGMA table_xinfo({schema.quote(table)})").fetchall()
    generated = [r[1] for r in info if r[6]]
    if generated:
        raise RecordingError(f"{label}: the {table} table has a generated column {str(generated[0])[:80]!r}, which "
                             "pgio-tui recordings never have: refused")
    have = {r[1]: (r[2] or "").upper() for r in info}
    if table == "ticks":  # metric columns come and go with the catalog: REAL or TEXT
        fixed = {c: want[c] for c in schema.TICK_COLUMNS}
        bad = [c for c, t in have.items() if c not in fixed and (t not in ("REAL", "TEXT") or len(c) > LABEL_CHARS)]
        if bad or any(have.get(c) != t for c, t in fixed.items()):
            raise RecordingError(f"{label}: the ticks table has columns of unexpected types or names: refused")
        return
    if have != want:
        raise RecordingError(f"{label}: the {table} table's columns are not the ones pgio-tui writes: refused")


def check_ticks(conn: sqlite3.Connection, label: str, after: int, upto: int | None = None) -> None:
    """Every tick after `after` (up to `upto`) has a wall time in 1970..2100 and finite elapsed / dt."""
    row = conn.execute(
        "SELECT tick, t FROM ticks WHERE tick > ? AND tick <= ? AND NOT (typeof(t) IN ('integer', 'real') "
        "AND t BETWEEN ? AND ? "
        "AND (elapsed IS NULL OR (typeof(elapsed) IN ('integer', 'real') AND abs(elapsed) < 1e12)) "
        "AND (dt IS NULL OR (typeof(dt) IN ('integer', 'real') AND abs(dt) < 1e12))) LIMIT 1",
        (after, 2 ** 63 - 1 if upto is None else upto, T_MIN, T_MAX)).fetchone()
    if row is not None:
        raise RecordingError(f"{label}: tick {row[0]} has no valid time (t = {str(row[1])[:40]}): the file is "
                             "damaged or crafted")


def schema_version(value: Any, label: str) -> int:
    """The file's schema version: an integer this reader can read (or migrate), else one line."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordingError(f"{label} is an SQLite file but not a pgio-tui recording (schema_version "
                             f"{str(value)[:40]!r})")
    if value > schema.SCHEMA_VERSION:
        raise RecordingError(f"{label} was recorded by a newer pgio-tui (schema {value}, this one reads up to "
                             f"{schema.SCHEMA_VERSION}); upgrade pgio-tui")
    if value < schema.FIRST_VERSION:
        raise RecordingError(f"{label}: schema_version {value} does not exist (the first is "
                             f"{schema.FIRST_VERSION}): the file is damaged or crafted")
    return value


# --- values as their column promises ------------------------------------------------------------

def number(v: Any) -> int | float | None:
    """An int or float within ±MAX_MAGNITUDE, else None (missing): text, blobs, NaN, infinities
    and absurd magnitudes are not measurements."""
    if type(v) is float or type(v) is int:
        return v if -MAX_MAGNITUDE <= v <= MAX_MAGNITUDE else None  # False for NaN
    return None


_NONE = type(None)
_NUMBER_TYPES = frozenset((int, float, _NONE))


def all_numbers(values: Collection[Any]) -> bool:
    """Whether number() keeps every one of `values` (a sequence or a dict's view: read more than
    once) as it is, None included: a whole row tested in a few passes in C instead of a call a value,
    so a window of good rows (replay's seek) decodes quickly; a row that fails is decoded value by value."""
    types = set(map(type, values))
    if not types <= _NUMBER_TYPES:
        return False
    known = [v for v in values if v is not None] if _NONE in types else values
    if not known:
        return True
    total = sum(known)  # NaN anywhere makes it NaN
    return total == total and -MAX_MAGNITUDE <= min(known) and max(known) <= MAX_MAGNITUDE


def known_sql(expr: str) -> str:
    """SQL that is true where number() of `expr` is not None (BETWEEN: abs() of the smallest
    64-bit integer is an error)."""
    return f"(typeof({expr}) IN ('integer', 'real') AND {expr} BETWEEN {-MAX_MAGNITUDE:.0f} AND {MAX_MAGNITUDE:.0f})"


def number_sql(expr: str) -> str:
    """SQL for number(): the value of `expr` when it is one, else NULL (checked by SQLite, not a
    Python call a value)."""
    return f"CASE WHEN {known_sql(expr)} THEN {expr} END"


def tick_number(v: Any) -> int | None:
    v = number(v)
    return None if v is None else int(v)


def queryid(v: Any) -> int | None:
    """A pg_stat_statements queryid: any 64-bit integer (most are beyond number()'s magnitude)."""
    return v if type(v) is int else None


def text(v: Any) -> str | None:
    """Text, or None: numbers become their text, blobs are missing."""
    if v is None or isinstance(v, str):
        return v
    if type(v) in (int, float):
        return str(v)
    return None


def label_text(v: Any) -> str | None:
    """text() of a name (a device, backend type, wait event, setting, application), cut to
    LABEL_CHARS: names are repeated in column names, labels and every row."""
    return capped(text(v), LABEL_CHARS)


def line_text(v: Any) -> str | None:
    """text() of a value or a line (a setting's value, an event, an output line), cut to LINE_CHARS."""
    return capped(text(v), LINE_CHARS)


def value(v: Any, sql_type: str) -> Any:
    """A metric value from a column declared `sql_type` (REAL or TEXT)."""
    return label_text(v) if sql_type in TEXT_TYPES else number(v)


def decode(v: Any) -> Any:
    """JSON text stored by the writer (objects, arrays) back to Python; blobs are missing, other
    values unchanged."""
    if isinstance(v, str) and v[:1] in "{[":
        try:
            return json.loads(v, parse_constant=lambda _c: None)
        except (ValueError, RecursionError):
            return v
    if isinstance(v, bytes):
        return None
    if isinstance(v, float):
        return number(v)
    return v


def json_object(v: Any) -> dict:
    d = decode(v)
    return d if isinstance(d, dict) else {}


def meta_value(key: str, v: Any) -> Any:
    """A meta value as its key promises: a number, an object, or text (None when it is not)."""
    v = decode(v)
    if key in META_NUMBERS:
        if isinstance(v, str):
            try:
                v = float(v) if key == "interval_s" else int(v)
            except ValueError:
                return None
        return number(v)
    if key in META_OBJECTS:
        return v if isinstance(v, dict) else None
    if isinstance(v, (dict, list)):
        return v
    return label_text(v) if key in META_LABELS else line_text(v)
