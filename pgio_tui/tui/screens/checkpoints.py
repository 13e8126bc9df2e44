"""CheckpointsScreen: the last checkpoints as a table, newest first, and the server's "checkpoints
are occurring too frequently" warnings.

Rows are the checkpoint tracker's finished checkpoints (sources/checkpoint.py): with the server log
(log_checkpoints) every column, from counters only the kind, buffers, write and sync times. Live
they come from the FrameHistory; replay reads the whole recording (MonitorApp.checkpoint_log), so
checkpoints from before the charts' window are there too. Only checkpoints finished by the
monitor's position are shown. Numbers are ours; the warning text is the server's (plain text).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import DataTable, Static

from pgio_tui import format as fmt
from pgio_tui.safe_text import plain_text
from pgio_tui.sources.checkpoint_rows import checkpoint_buffers
from pgio_tui.tui.screens.view_screen import TableScreen

WIDE_AT = 120
WARNINGS_SHOWN = 3


def _s(v: float | None) -> str:
    """Seconds as the log writes them (ms resolution), shorter from 1 s on."""
    return "-" if v is None else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def _wal_files(c: dict) -> str:
    parts = [c.get(k) for k in ("wal_added", "wal_removed", "wal_recycled")]
    return "-" if all(p is None for p in parts) else "/".join("-" if p is None else str(p) for p in parts)


def _clock(t: float | None) -> str:
    return "-" if t is None else time.strftime("%H:%M:%S", time.localtime(t))


# (heading, cell, wide only): the narrow set fits 80 columns; the detail line has every figure.
COLUMNS: tuple[tuple[str, Callable[[dict], str], bool], ...] = (
    ("start", lambda c: _clock(c.get("start_t")), False),
    ("kind", lambda c: str(c.get("kind") or "?")[:10], False),
    ("buffers", lambda c: fmt.si(checkpoint_buffers(c)), False),
    ("%SB", lambda c: "-" if c.get("buffers_pct") is None else f"{c['buffers_pct']:.1f}", False),
    ("write s", lambda c: _s(c.get("write_s")), False),
    ("sync s", lambda c: _s(c.get("sync_s")), False),
    ("total s", lambda c: _s(c.get("total_s")), False),
    ("files", lambda c: fmt.si(c.get("sync_files")), True),
    ("longest", lambda c: _s(c.get("longest_s")), True),
    ("dist", lambda c: fmt.kib(c.get("distance_kb")), False),
    ("est", lambda c: fmt.kib(c.get("estimate_kb")), True),
    ("WAL +/-/r", _wal_files, False),
    ("from", lambda c: str(c.get("source") or "-"), True),
)


def detail(c: dict[str, Any]) -> str:
    """Every figure of one checkpoint, for the line under the table."""
    out = [f"{c.get('kind') or '?'} checkpoint {_clock(c.get('start_t'))}-{_clock(c.get('end_t'))}",
           f"{fmt.number(checkpoint_buffers(c), 'buffers')} buffers"
           + (f" ({c['buffers_pct']:.1f}% of shared_buffers)" if c.get("buffers_pct") is not None else "")]
    if c.get("slru_buffers") is not None:
        out.append(f"{c['slru_buffers']} SLRU buffers")
    out.append(f"write {_s(c.get('write_s'))} s, sync {_s(c.get('sync_s'))} s, total {_s(c.get('total_s'))} s")
    if c.get("sync_files") is not None:
        out.append(f"sync files {c['sync_files']}, longest {_s(c.get('longest_s'))} s, "
                   f"average {_s(c.get('average_s'))} s")
    if c.get("distance_kb") is not None:
        out.append(f"distance {fmt.kib(c['distance_kb'])}, estimate {fmt.kib(c.get('estimate_kb'))}")
    if _wal_files(c) != "-":
        out.append(f"WAL files added/removed/recycled {_wal_files(c)}")
    out.append("from the server log" if c.get("source") == "log" else "from counters (no log line)")
    return " · ".join(out)


class CheckpointsScreen(TableScreen):
    PREFIX = "ckpt"
    DEFAULT_CSS = "CheckpointsScreen #ckpt-warnings { height: auto; max-height: 4; padding: 0 1; color: $warning; }"
    BINDINGS = [
        Binding("escape,H", "app.pop_screen", "Back", key_display="esc", id="checkpoints-back"),
    ]

    @classmethod
    def over(cls, app, monitor, arg: str) -> CheckpointsScreen:
        return cls(app.checkpoint_log, at=lambda: monitor.view().t1)

    def __init__(self, log: Callable[[], tuple[list[dict], list[tuple[float, str]]]],
                 at: Callable[[], float | None] = lambda: None):
        super().__init__(at)
        self.source = log  # -> (finished checkpoints oldest first, (t, warning text) oldest first)

    def below(self) -> Iterable[Widget]:
        yield Static(id="ckpt-warnings")

    def redraw_view(self, force: bool = False) -> None:
        """Draw the checkpoints finished by the monitor's position, when they changed."""
        at = self.at()
        rows, warnings = self.source()
        if at is not None:
            rows = [c for c in rows if (c.get("end_t") or 0) <= at + 1e-6]
            warnings = [w for w in warnings if w[0] <= at + 1e-6]
        wide = self.app.size.width >= WIDE_AT
        key = (len(rows), rows[-1].get("end_t") if rows else None, len(warnings), wide)
        if not self.changed(key, force):
            return
        self.rows = list(reversed(rows))
        n = len(self.rows)
        self.head().update(Text(
            f"Checkpoints: the last {n}, newest first" if n else
            "Checkpoints: none finished yet (each one shows here when it completes)"))
        table = self.query_one(DataTable)
        table.clear(columns=True)
        cols = [c for c in COLUMNS if wide or not c[2]]
        for heading, _, _ in cols:
            table.add_column(Text(heading, justify="right"), key=heading)
        for i, c in enumerate(self.rows):
            table.add_row(*(plain_text(cell(c), justify="right") for _, cell, _ in cols), key=str(i))
        self.show_detail(table.cursor_row)
        box = self.query_one("#ckpt-warnings", Static)
        if warnings:
            out = Text(f"{len(warnings)} warning(s) from the server log; the last:")
            for t, text in warnings[-WARNINGS_SHOWN:]:
                out.append(f"\n{_clock(t)} ")
                out.append_text(plain_text(text))
            box.update(out)
        else:
            box.update("")

    def show_detail(self, index: int) -> None:
        box = self.detail_box()
        box.update(plain_text(detail(self.rows[index])) if 0 <= index < len(self.rows) else "")
