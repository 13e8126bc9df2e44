"""The experiment strip: where a running experiment is (run i of N, the settings of this run, its
elapsed time, the ETA, the flags so far) and the last finished run's line, under the panes."""

from __future__ import annotations

from pgio_tui.experiments.progress import Snapshot
from pgio_tui.format import DASH, clock
from pgio_tui.safe_text import printable
from pgio_tui.tui.drawing import fit
from pgio_tui.tui.plot import Line
from pgio_tui.tui.widgets.lines import LinesView

BAR = 12


def bar(fraction: float, width: int = BAR) -> str:
    full = int(max(0.0, min(1.0, fraction)) * width)
    return "█" * full + "░" * (width - full)


def lines(snap: Snapshot, last: str, finished: str | None, width: int) -> list[Line]:
    """Two lines: where the experiment is (run i of N, ETA, flags, this run's clock), then this
    run's settings and the last finished run (or how the experiment ended). The first things on
    each line are the ones that must fit 80 columns."""
    if finished is not None:
        head: Line = ((" experiment ", "primary"), (" " + printable(finished), "ok"),
                      ("  q: quit and print the results table", "muted"))
    else:
        where = f"run {snap.index}/{snap.total}" if snap.index else f"0/{snap.total} runs"
        eta = f"ETA {clock(snap.eta_s)}" if snap.eta_s is not None else f"ETA {DASH}"
        flags = f"{snap.flags} flag{'s' if snap.flags != 1 else ''}" if snap.flags else "no flags"
        run_clock = (clock(snap.elapsed_s) + (f" of {clock(snap.expected_s)}" if snap.expected_s else "")
                     if snap.phase else "")
        phase = f" · {snap.phase}" if snap.phase and snap.phase != "run" else ""
        head = ((" experiment ", "primary"), (" " + bar(snap.fraction) + " ", "accent"), (where, None),
                (" · " + eta, None), (" · " + flags, "warn" if snap.flags else "muted"),
                (phase + (" · " + run_clock if run_clock else ""), "muted"))
    this = f" this run: {printable(snap.label)}" if snap.label and finished is None else ""
    parts = (printable(last) or "none yet").split(" · ")  # dropped from the end when it does not fit
    what, sep, which = parts[0].partition(": ")  # "run 2/6 done", ": its settings"
    second: Line = ((this, None), ((" │ last: " if this else " last: ") + what, "muted"),
                    *(((" " + which, "muted"),) if sep else ()), *((" · " + p, "muted") for p in parts[1:]))
    return [fit(head, width), fit(second, width)]


class ExperimentStrip(LinesView):
    DEFAULT_CSS = """
    ExperimentStrip { dock: bottom; height: 2; margin-bottom: 1; background: $surface; }
    """

    def draw(self, snap: Snapshot, last: str = "", finished: str | None = None) -> None:
        self.set_lines(lines(snap, last, finished, self.area.width or 80))
