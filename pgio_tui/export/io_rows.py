"""`pgio-tui export FILE --io`: the recorded pg_stat_io rows (16+) as CSV or JSON Lines, one row per
backend type, object and context per tick with any I/O: every operation per second, its kB per
second and its time in ms per second (empty while the timing setting was off: unknown, not 0).
A figure x `dt` is the tick's whole count as recorded (operations, kB; ms to the µs), so sums over
ticks match the view's own delta. Mean ms per operation over any window is the sum of a time column
over the sum of its operations' (ratios.per_op_ms). Names are the server's text, written plain
(safe_text)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from pgio_tui.export.backends import write_rows
from pgio_tui.frame import IO_FIELDS
from pgio_tui.safe_text import printable

if TYPE_CHECKING:
    from pgio_tui.store.reader import Recording

COLUMNS = ("tick", "t", "elapsed", "dt", "backend_type", "object", "context", *IO_FIELDS)


def io_rows(recording: Recording, start_tick: int | None = None, end_tick: int | None = None):
    """One tuple of COLUMNS per recorded pg_stat_io row with I/O per tick, in tick order."""
    for f in recording.frames(start_tick, end_tick):
        for (bt, obj, ctx), row in f.io.items():
            if any(row.get(op) for op in IO_FIELDS):
                yield (f.tick, f.t, f.elapsed, f.dt, printable(bt), printable(obj), printable(ctx),
                       *(row.get(c) for c in IO_FIELDS))


def export_io(recording: Recording, out: TextIO, fmt: str = "csv", start_tick: int | None = None,
              end_tick: int | None = None) -> int:
    """Write the recorded pg_stat_io rows (COLUMNS). Returns rows written."""
    return write_rows(out, fmt, COLUMNS, io_rows(recording, start_tick, end_tick), "--io")
