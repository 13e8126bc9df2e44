"""`pgio-tui export FILE --io`: the recorded pg_stat_io rows, as the recording gives them back."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pgio_tui.export.io_rows import COLUMNS, export_io
from pgio_tui.frame import IO_FIELDS
from pgio_tui.store.reader import Recording


def test_every_recorded_row_with_io_is_one_csv_row(fixture_file):
    out = io.StringIO()
    with Recording(fixture_file) as rec:
        n = export_io(rec, out, "csv", 0, 40)
        frames = {f.tick: f for f in rec.frames(0, 40)}
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == COLUMNS and len(rows) == n
    assert n == sum(1 for f in frames.values() for r in f.io.values() if any(r[c] for c in IO_FIELDS))
    for r in rows:
        want = frames[int(r["tick"])].io[(r["backend_type"], r["object"], r["context"])]
        assert all(float(r[c] or "nan") == pytest.approx(want[c]) if want[c] is not None else r[c] == ""
                   for c in IO_FIELDS)
    assert {r["context"] for r in rows} >= {"normal", "vacuum", "bulkread"} and {r["object"] for r in rows} >= {"wal"}
    for r in rows:  # x dt: the tick's whole counts again, never under a block per operation
        dt = float(r["dt"])
        for c in ("reads", "writes", "hits", "read_kb", "write_kb"):
            assert float(r[c]) * dt == pytest.approx(round(float(r[c]) * dt), abs=1e-6), (r["tick"], c)
        assert float(r["read_kb"]) >= 8 * float(r["reads"]) - 1e-9 and float(r["write_kb"]) >= 8 * float(r["writes"]) - 1e-9


def test_json_lines_and_formats(fixture_file):
    out = io.StringIO()
    with Recording(fixture_file) as rec:
        export_io(rec, out, "json", 0, 3)
        with pytest.raises(ValueError, match="--io writes csv or json"):
            export_io(rec, io.StringIO(), "openmetrics")
    first = json.loads(out.getvalue().splitlines()[0])
    assert list(first) == list(COLUMNS) and first["tick"] == 1
