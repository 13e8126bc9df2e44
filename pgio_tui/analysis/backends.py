"""Per-run backend rows for diff and report: the bytes the busiest kinds of backend read and wrote.

A recording keeps, per tick, the few backends with the most I/O (frame.BACKENDS_TOP, rates over
the tick); a run's figure for a backend adds up rate × dt over the window's ticks in which it was
kept, which for the busy backends a diff is about is nearly all of them. Pids differ between runs,
so backends are grouped, and matched between runs, by backend type and application name
("client backend (pgbench)", "checkpointer"): every process of that kind counts.

One GROUP BY over the file's documented view `backend_io_named` (docs/recording.md): rebuilding
every frame would cost about 0.8 s per recorded hour, where a diff of two 4 h runs has 1 s in all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pgio_tui.analysis.statements import one_line
from pgio_tui.frame import BACKEND_RATES, BACKENDS_TOP
from pgio_tui.store.validate import number, text

if TYPE_CHECKING:
    from pgio_tui.analysis.align import Window
    from pgio_tui.store.reader import Recording  # annotations only: sqlite-utils stays unloaded

TOP_BACKENDS = 8  # kinds of backend per run in a summary, by bytes read + written
NAME_WIDTH = 40
MIB = 1 << 20
VIEW = "backend_io_named"
# Frame field -> the figure's name in a summary row; /proc/<pid>/io first, pg_stat_get_backend_io (18+) after.
FIGURES = dict(zip(BACKEND_RATES, ("read", "dirtied", "pg read", "pg written")))
KERNEL, PG = BACKEND_RATES[:2], BACKEND_RATES[2:]
BACKENDS_NOTE = (f"backends: MiB per backend type and application (pids differ between runs), summed over the "
                 f"ticks in which a process was among the {BACKENDS_TOP} with the most I/O the recording keeps; "
                 "read: /proc/<pid>/io read_bytes (storage, page-cache hits not counted); dirtied: its "
                 "write_bytes, page-cache bytes dirtied (a re-dirtied page counts again: not bytes sent to "
                 "storage); pg read/written: pg_stat_get_backend_io (18), what PostgreSQL itself read and wrote")


def backend_label(backend_type: str | None, application: str | None) -> str:
    """"client backend (pgbench)", or the type alone for a process without an application name
    (the checkpointer, the WAL writer, io workers): one line of plain text."""
    kind = one_line(backend_type, NAME_WIDTH) or "?"
    app = one_line(application, NAME_WIDTH)
    return f"{kind} ({app})" if app else kind


def backend_totals(rec: Recording, start_tick: int, end_tick: int) -> dict[tuple[str, str], dict[str, float | None]]:
    """Kind (backend type, application: what pairs a kind between runs; backend_label shows it) ->
    {"processes": distinct pids, "ticks": rows, field: bytes over the ticks [start_tick, end_tick]
    (None: never measured)} for each kind of backend the file kept."""
    conn = rec.db.conn
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = ?", (VIEW,)).fetchone() is None:
        return {}  # a file from before backends were recorded
    sums = ", ".join(f"total(v.{f} * t.dt), count(v.{f})" for f in BACKEND_RATES)
    sql = (f"SELECT v.backend_type, v.application, count(DISTINCT v.pid), count(*), {sums} "
           f"FROM {VIEW} v JOIN ticks t ON t.tick = v.tick WHERE v.tick BETWEEN ? AND ? GROUP BY 1, 2")
    out: dict[tuple[str, str], dict[str, float | None]] = {}
    for kind, app, pids, rows, *figures in conn.execute(sql, (start_tick, end_tick)):
        key = (text(kind) or "?", text(app) or "")  # a blob is missing; two such kinds are one "?"
        row = out.setdefault(key, {"processes": 0, "ticks": 0, **{f: None for f in BACKEND_RATES}})
        row["processes"] += pids
        row["ticks"] += rows
        for f, total, measured in zip(BACKEND_RATES, figures[::2], figures[1::2]):
            total = number(total)  # a crafted file's absurd sums are missing, not figures
            if measured and total is not None and total >= 0:
                row[f] = (row[f] or 0.0) + round(total)  # stored as whole bytes over each tick
    return out


def _io(t: dict) -> float:
    """What ranks a kind of backend: the kernel's bytes where measured (on the database host),
    else PostgreSQL's own (18)."""
    kernel = [t[f] for f in KERNEL if t[f] is not None]
    return sum(kernel) if kernel else sum(t[f] or 0.0 for f in PG)


def backend_rows(rec: Recording, win: Window,
                 top: int = TOP_BACKENDS) -> list[tuple[str, str, str, str, float | None]]:
    """(kind, backend label, figure, unit, value) for the run's `top` kinds of backend by bytes read
    and written: MiB read and page-cache MiB dirtied per /proc/<pid>/io, and on 18 MiB read and
    written per pg_stat_get_backend_io. The kind ("type/application", whole) pairs rows between
    runs; the label is for display."""
    if win.start_tick is None or win.end_tick is None:
        return []
    totals = backend_totals(rec, win.start_tick, win.end_tick)
    ranked = sorted(((key, backend_label(*key), t) for key, t in totals.items() if _io(t) > 0),
                    key=lambda r: (-_io(r[2]), r[1], r[0]))
    out: list[tuple[str, str, str, str, float | None]] = []
    for (kind, app), label, t in ranked[:top]:
        out += [(f"{kind}/{app}", label, FIGURES[f], "MiB", v / MIB) for f in BACKEND_RATES if (v := t[f]) is not None]
    return out
