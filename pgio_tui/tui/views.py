"""The extra views over the monitor's position, in the order of their keys in the footer: the one
list their keys, footer entries, command-palette entries and help paragraphs come from.

A view is a ViewScreen (screens/view_screen.py) whose `over(app, monitor, arg)` builds it over the
monitor's position; it is imported when first shown, so that none of them costs start-up time.
Its key shows it, again (or escape) goes back, another view's key switches to that view.
docs/architecture.md, "Add an extra view", says what to write.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class ExtraView:
    """A view behind a key, as data: its binding and where its screen is imported from when first shown."""

    key: str  # the key that shows it
    id: str  # its binding's id (a keymap names it)
    name: str  # footer and palette
    tooltip: str  # its line among the keys of the help
    palette: str  # its command-palette description
    screen: str  # "module:Class" of its ViewScreen
    arg: str = ""  # handed to the screen's over() (io_view: which pane)
    help: str = ""  # its paragraph under "Views" in the help (plain text), "" for none

    def open(self, app, monitor):
        """The view's screen over the monitor's position."""
        module, name = self.screen.split(":")
        return getattr(importlib.import_module(module), name).over(app, monitor, self.arg)


EXTRA_VIEWS: tuple[ExtraView, ...] = (
    ExtraView("S", "statements", "Statements", "Statements: top statements by time and I/O (o: sort, esc: back)",
              "Top statements by time and I/O", "pgio_tui.tui.screens.statements:StatementsScreen",
              help="top 20 statements (pg_stat_statements) of the latest window: share of time, calls/s, "
                   "mean and stddev ms, blocks read and dirtied/s, WAL; o: sort key; the row's text below."),
    ExtraView("H", "checkpoints", "Checkpoints", "Checkpoints: the last ones as a table, and too-frequent warnings (esc: back)",
              "The last checkpoints and too-frequent warnings", "pgio_tui.tui.screens.checkpoints:CheckpointsScreen"),
    ExtraView("B", "backends", "Backends", "Backends: per process I/O, state and wait; AIO in flight (o: sort, esc: back)",
              "Per-process I/O, state, wait; AIO in flight", "pgio_tui.tui.screens.backends:BackendsScreen"),
    ExtraView("W", "wal_view", "WAL", "WAL: bytes, records, full-page images, writes and syncs, the WAL device's flushes",
              "WAL bytes, records, FPI, writes, syncs, WAL device flushes",
              "pgio_tui.tui.screens.io_view:IOViewScreen", arg="wal"),
    ExtraView("R", "reads_view", "Reads", "Reads & cache: misses vs hits, read time, by source, shared buffers, page cache",
              "Misses vs hits, by source, shared buffers, page cache",
              "pgio_tui.tui.screens.io_view:IOViewScreen", arg="reads"),
)


def help_items() -> list[tuple[str, str]]:
    """(key and name, help) of the views that have a paragraph in the help screen's "Views" section."""
    return [(f"{v.key} {v.name}", v.help) for v in EXTRA_VIEWS if v.help]
