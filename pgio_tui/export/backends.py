"""`pgio-tui export FILE --backends`: the recorded backends as CSV or JSON Lines, one row per
backend per tick, as the Backends view shows them in replay.

Read through the recording's frames (what replay shows: rates over the tick, most I/O first), so
only the backends the file kept: per tick the few with the most I/O (frame.BACKENDS_TOP). The
application, database, state, wait event and query text (pg_stat_statements', by the backend's
query_id, on one line) are the server's text: plain, control characters escaped, CSV cells never
formulas (safe_text).
"""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, TextIO

from pgio_tui.analysis.statements import one_line
from pgio_tui.frame import BACKEND_LABELS, BACKEND_RATES
from pgio_tui.safe_text import csv_cell, printable

if TYPE_CHECKING:
    from pgio_tui.store.reader import Recording

FORMATS = ("csv", "json")
COLUMNS = ("tick", "t", "elapsed", "dt", "pid", *BACKEND_LABELS, "query_start", "query_id", *BACKEND_RATES, "query")
_TEXT = {*BACKEND_LABELS, "query"}


def backend_rows(recording: Recording, start_tick: int | None = None, end_tick: int | None = None):
    """One tuple of COLUMNS per recorded backend per tick, in tick order, most I/O first."""
    texts = recording.statement_texts()
    for f in recording.frames(start_tick, end_tick):
        for b in f.backends:
            query = texts.get(q) if (q := b.get("query_id")) is not None else None
            row = {**b, "tick": f.tick, "t": f.t, "elapsed": f.elapsed, "dt": f.dt,
                   "query": None if query is None else one_line(query)}  # on one line, as diff shows it
            yield tuple(printable(row.get(c)) if c in _TEXT and row.get(c) is not None else row.get(c)
                        for c in COLUMNS)


def export_backends(recording: Recording, out: TextIO, fmt: str = "csv", start_tick: int | None = None,
                    end_tick: int | None = None) -> int:
    """Write the recorded backends (COLUMNS). Returns rows written."""
    return write_rows(out, fmt, COLUMNS, backend_rows(recording, start_tick, end_tick), "--backends")


def write_rows(out: TextIO, fmt: str, columns: tuple[str, ...], rows, option: str) -> int:
    """Rows of `columns` as csv (a header and empty cells for missing values) or json (JSON Lines
    with nulls); `option` names the export in the error. Returns rows written."""
    if fmt not in FORMATS:
        raise ValueError(f"{option} writes {' or '.join(FORMATS)}, not {fmt}")
    n = 0
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for n, row in enumerate(rows, 1):
            w.writerow(map(csv_cell, row))
    else:
        for n, row in enumerate(rows, 1):
            out.write(json.dumps(dict(zip(columns, row)), separators=(",", ":"), allow_nan=False) + "\n")
    return n
