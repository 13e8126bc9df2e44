"""The floor for a Textual monitor: a bare Textual app repainting a text table once a second.

No server, no sampling, no charts: a header, a 1 s timer that rewrites one Static with a table of
process-like rows whose figures change every second (as pg_activity's table does), and a footer.
`bench/tui_cpu.py --floor` runs it in its own pane beside pgio-tui and pg_activity, so the CPU that
Textual itself needs to repaint a changing screen once a second is measured on the same load.

    python bench/textual_table.py
"""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


def table(tick: int, rows: int) -> str:
    """`rows` lines like a process list: pid, database, user, CPU, memory, read/write, time, state, query."""
    head = f"{'PID':>7} {'DATABASE':<10} {'USER':<9} {'CPU%':>5} {'MEM%':>5} {'READ/s':>8} {'WRITE/s':>8} " \
           f"{'TIME+':>8} {'STATE':<7} QUERY"
    lines = [head]
    for i in range(rows):
        n = (tick * 7919 + i * 104729) % 100003
        lines.append(f"{4000 + i:>7} {'postgres':<10} {'postgres':<9} {n % 97 / 10:>5.1f} {n % 13 / 10:>5.1f} "
                     f"{n % 9000 / 10:>7.1f}K {n % 7000 / 10:>7.1f}K {(tick + i) % 60:>5}.{n % 100:02d} "
                     f"{'active' if n % 3 else 'idle':<7} UPDATE pgbench_accounts SET abalance = abalance + {n % 5000}")
    return "\n".join(lines)


class TableApp(App):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(table(0, 34), id="table")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(1, self.tick)

    def tick(self) -> None:
        self.query_one("#table", Static).update(table(int(time.monotonic()), self.size.height - 6))


if __name__ == "__main__":
    TableApp().run()
