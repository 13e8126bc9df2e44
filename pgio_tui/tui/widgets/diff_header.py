"""DiffHeader: one line naming run A and run B in their colours, the alignment and the verdict count."""

from __future__ import annotations

from pgio_tui.analysis.align import ORIGIN
from pgio_tui.analysis.compare import Comparison
from pgio_tui.analysis.settings_diff import machine_host
from pgio_tui import format as fmt
from pgio_tui.tui.plot import Line
from pgio_tui.tui.widgets.lines import LinesView


def header_line(c: Comparison, width: int) -> Line:
    """Runs, verdict count, alignment; the hosts only when there is room for them."""
    changed = sum(1 for r in c.rows if r.verdict == "changed")
    judged = sum(1 for r in c.rows if r.verdict)
    for with_hosts in (True, False):
        runs: list = [("pgio-tui diff ", "bold")]
        for label, s, style in (("A", c.a, "diff-a"), ("B", c.b, "diff-b")):
            host = machine_host(s.meta) if with_hosts else ""
            runs += [("■", style), (f"{label} ", "muted"), (s.path.name, None),
                     (f" ({host}) " if host else " ", "muted")]
        runs += [(f"· {changed}/{judged} changed ", "warn" if changed else "muted"),
                 (f"· {fmt.duration(c.a.window.length)} from the {ORIGIN[c.align]}", "muted")]
        if sum(len(t) for t, _ in runs) <= width:
            break
    out, used = [], 0
    for text, style in runs:
        out.append((text[: max(0, width - used)], style))
        used += len(text)
        if used >= width:
            break
    return tuple(r for r in out if r[0])


class DiffHeader(LinesView):
    DEFAULT_CSS = """
    DiffHeader { height: 1; background: $panel; }
    """

    def __init__(self, comparison: Comparison, *, id: str | None = None):
        super().__init__(id=id)
        self.comparison = comparison

    def on_resize(self, event) -> None:
        self.set_lines([header_line(self.comparison, event.size.width)])
