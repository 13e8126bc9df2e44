"""SettingsView: which runs are compared, over which stretch, and what differs between them.

The settings that differ (PostgreSQL, kernel, per device role), the machine facts when they differ,
and the comparison's notes: the same content as the table format's settings part, as Rich tables
that wrap to the terminal's width.
"""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from textual.widgets import Static

from pgio_tui.analysis.compare import Comparison
from pgio_tui.analysis.formats import VERDICT_LEGEND, header_rows
from pgio_tui.format import DASH
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui.tui.palette import palette_of
from pgio_tui.safe_text import plain_text as Text  # recorded names: text, not markup



class SettingsView(Static):
    DEFAULT_CSS = """
    SettingsView { height: auto; padding: 0 1; }
    """

    def __init__(self, comparison: Comparison, *, runs: bool = True, id: str | None = None):
        super().__init__(id=id)
        self.comparison = comparison
        self.runs = runs  # the runs' table first (off beside the summary: the header names them)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _t: self.fill())
        self.fill()

    def fill(self) -> None:
        self.update(self.renderable_of())

    def renderable_of(self) -> Group:
        c, pal = self.comparison, palette_of(self.app)
        a_style, b_style, muted = pal["diff-a"], pal["diff-b"], pal["muted"]
        head = lambda title: Text(title, style="bold")  # noqa: E731

        def table(*columns: str) -> Table:
            t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
            for i, col in enumerate(columns):
                style = a_style if col == "A" else (b_style if col == "B" else None)
                t.add_column(col, header_style=style or "bold", overflow="fold", no_wrap=i == 0)  # names whole
            return t

        parts: list = []
        if self.runs:
            runs = table("", "A", "B")
            for what, a, b in header_rows(c):
                runs.add_row(Text(what, style=muted), Text(a), Text(b))
            parts += [head(f"runs (aligned on {c.align})"), runs]
        parts.append(head("settings that differ"))
        if c.settings:
            sett = table("setting", "kind", "A", "B")
            for s in c.settings:
                sett.add_row(Text(s.name), Text(s.category, style=muted), Text(s.a or DASH), Text(s.b or DASH))
            parts.append(sett)
        else:
            parts.append(Text("  none", style=muted))
        parts.append(head("machine"))
        if c.machine:
            mach = table("fact", "A", "B")
            for s in c.machine:
                mach.add_row(Text(s.name), Text(s.a or DASH), Text(s.b or DASH))
            parts.append(mach)
        else:
            parts.append(Text(f"  same machine ({machine_host(c.a.meta) or '?'})", style=muted))
        if c.notes:
            parts.append(Text(""))
            parts.append(head("notes"))
            parts += [Text(f"  • {n}") for n in c.notes]
        parts += [Text(""), Text(VERDICT_LEGEND, style=muted)]
        return Group(*parts)
