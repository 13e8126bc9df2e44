"""The monitor's panes, in order: the one list the rest follows.

A pane's number key and tab, the grid it is laid out in (screens/monitor.py), its paragraph in the
help screen (screens/dialogs.py) and its figure in the vitals line (widgets/status.py) all come
from this list and each pane's PaneSpec; docs/architecture.md, "Add a pane", says what to write.
"""

from __future__ import annotations

from pgio_tui.tui.widgets.checkpoint_pane import CheckpointPane
from pgio_tui.tui.widgets.devices_pane import DevicesPane
from pgio_tui.tui.widgets.latency_pane import LatencyPane
from pgio_tui.tui.widgets.memory_pane import MemoryPane
from pgio_tui.tui.widgets.pane import ChartPane
from pgio_tui.tui.widgets.waits_pane import WaitsPane
from pgio_tui.tui.widgets.writes_pane import WritesPane

PANES: tuple[type[ChartPane], ...] = (CheckpointPane, WritesPane, MemoryPane, DevicesPane, LatencyPane, WaitsPane)


def pane_key(index: int) -> str:
    """The number key of the pane at `index` (0-based)."""
    return str(index + 1)


KEYS_SHOWN = f"1-{len(PANES)}"  # the keys as the footer and the help list them


def help_items() -> list[tuple[str, str]]:
    """(number and title, help) of each pane, for the help screen's "Panes" section."""
    return [(f"{pane_key(i)} {cls.SPEC.title}", cls.SPEC.help) for i, cls in enumerate(PANES)]
