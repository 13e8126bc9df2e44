"""The one-line header, the vitals strip (small terminals) and the workload strip.

No wall clock anywhere: every time shown is relative to the frames, so a snapshot is the same on
every run and a replay shows the recording's time, not today's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui import textual_private
from pgio_tui.tui.drawing import fit
from pgio_tui.tui.plot import Line, Run
from pgio_tui.tui.panes import PANES
from pgio_tui.tui.widgets.lines import LinesView
from pgio_tui.tui.widgets.pane import View


@dataclass
class HeaderState:
    """What the header shows besides the session: set by whoever drives the screen."""

    mode: str = "live"  # live | replay | diff: replay/diff put their position/speed in `detail`
    detail: str = ""
    recording: str | None = None
    recorded_ticks: int = 0
    paused: bool = False
    postmaster_start: float | None = None


def fit_groups(groups: list[tuple[int, str, list[Run]]], width: int) -> Line:
    """Groups are (priority, side, runs); drop the least important (highest number) until the
    rest fits, then push the right-hand side to the right edge."""
    groups = [g for g in groups if g[2]]
    size = lambda gs: sum(len(t) for _, _, runs in gs for t, _ in runs)  # noqa: E731
    while size(groups) > width:
        worst = max(range(len(groups)), key=lambda i: (groups[i][0], i))
        if groups[worst][0] == 0:
            break
        groups.pop(worst)
    left = [r for _, side, runs in groups if side == "l" for r in runs]
    right = [r for _, side, runs in groups if side == "r" for r in runs]
    pad = max(0, width - size(groups))
    return tuple(left + [(" " * pad, None)] + right)


def cpu_share(history, ticks: int = 30) -> float | None:
    """pgio-tui's own CPU (the whole process: sampler and UI) as % of one core over the last ticks:
    one tick's os.times() moves in 10 ms steps, too coarse to show alone."""
    cpu, t = history.series.get(M.OBSERVER_CPU_MS), history.t
    if not cpu or len(t) < 2:
        return None
    k = max(1, len(t) - ticks)
    used = sum(v for v in cpu[k:] if v is not None)
    span = t[-1] - t[k - 1]
    return used / (span * 1000) * 100 if span > 0 else None


HEADER_FIGURES = (  # what the header's figures are: its tooltip and its section of the help
    ("obs A/B ms", "the last tick's collection took A ms, B of them in the server's query"),
    ("cpu", "pgio-tui's own CPU (sampler and display), % of one core over the last 30 ticks"),
    ("⧗", "the charts' time window"),
)


class StatusBar(LinesView):
    """Host, server version, uptime, interval, recording state, the observer's own cost."""

    def on_mount(self) -> None:
        super().on_mount()
        self.tooltip = "\n".join(f"{k}: {text}" for k, text in HEADER_FIGURES)

    DEFAULT_CSS = """
    StatusBar { dock: top; height: 1; background: $panel; }
    """

    def draw(self, view: View, state: HeaderState) -> None:
        self.set_lines([self.line(view, state, self.area.width or 80)])

    @staticmethod
    def line(view: View, state: HeaderState, width: int) -> Line:
        s, last = view.session, view.history.last
        groups: list[tuple[int, str, list[Run]]] = [
            (0, "l", [(" pgio-tui ", "primary")]),
            (0, "l", [(s.target + " ", "bold")]),
            (1, "l", [(f"PG {s.server_version.split()[0]} ", None)] if s.server_version else []),
            (4, "l", [(f"up {fmt.duration(last.t - state.postmaster_start)} ", "muted")]
             if state.postmaster_start and last is not None else []),
            (3, "l", [(f"every {s.interval:g}s ", "muted")]),
            (0, "l", short_rates(last, s.interval)),
            (2, "l", [(slow + " ", "warn")] if (slow := textual_private.header_note()) else []),
            (0, "l", [(state.detail + " ", "accent")] if state.detail else []),
            (0, "r", [("⏸ PAUSED ", "warn")] if state.paused else []),
        ]
        if state.mode == "live":
            if state.recording:
                groups += [(0, "r", [("● REC ", "crit")]),
                           (2, "r", [(os.path.basename(state.recording) + " ", None),
                                     (f"{state.recorded_ticks} ticks ", "muted")])]
            else:
                groups.append((1, "r", [("○ not recording ", "muted")]))
        if last is not None:
            collect, server = last.number(M.OBSERVER_COLLECT_MS), last.number(M.OBSERVER_SERVER_MS)
            share = cpu_share(view.history)
            groups.append((2, "r", [("obs ", "muted"), (fmt.ms(collect), None), ("/", "muted"),
                                    (fmt.ms(server), None), (" ms ", "muted")]))
            groups.append((3, "r", [("cpu ", "muted"), (f"{share:.1f}% " if share is not None else "- ", None)]))
        groups.append((0, "r", [(f"⧗{fmt.window(view.t1 - view.t0)} ", "muted")]))
        return fit_groups(groups, width)


SHORT_RATES = 0.75  # a tick's rates span at most this share of the interval: the header says how long


def short_rates(last, interval: float) -> list[Run]:
    """The live view's early tick (tui/feed.py's EARLY_TICK_S): its rates span a fraction of the
    interval, so they are noisier (PostgreSQL's busy backends report their counts every 0.5-1 s).
    Said in the header while the newest tick is such a one."""
    if last is None or last.dt is None or last.dt > SHORT_RATES * interval:
        return []
    return [(f"rates over {fmt.ms(last.dt * 1000)} ms ", "accent")]


class Vitals(LinesView):
    """One line of every pane's headline figure, for layouts that show one pane at a time."""

    DEFAULT_CSS = """
    Vitals { height: 1; background: $surface; }
    """

    def draw(self, view: View) -> None:
        self.set_lines([self.line(view, self.area.width or 80)])

    @staticmethod
    def line(view: View, width: int = 200) -> Line:
        """Each pane's vital (its figure, tui/panes.py), in the panes' order; whole groups only: a
        figure that does not fit is left out (the pane's vital_rank says which first), never cut
        mid-number."""
        groups: list[tuple[int, str, list[Run]]] = []
        for cls in PANES:
            runs = cls.vital(view)
            if runs:
                groups.append((cls.SPEC.vital_rank, "l", [(" │ ", "axis") if groups else ("", None), *runs]))
        line = fit_groups(groups, width)
        return line[:-1] if line and line[-1][1] is None and not line[-1][0].strip() else line


class WorkloadStrip(LinesView):
    """A launched workload (pgio_tui.interfaces.WorkloadLike): kind, state and the tail of its output."""

    DEFAULT_CSS = """
    WorkloadStrip { dock: bottom; height: 3; background: $surface; display: none; }
    WorkloadStrip.-on { display: block; }
    """

    def draw(self, workload) -> None:
        if workload is None:
            return
        try:
            kind = str(workload.kind)
            state = self.state(workload)
            tail = list(workload.output_tail(2))
        except Exception as exc:  # a workload bug must not take the monitor down
            kind, state, tail = "workload", [("?", "warn")], [f"(cannot read the workload: {exc})"]
        lines: list[Line] = [((f" {kind} ", "primary"), *state)]
        for text in (tail + ["", ""])[:2]:
            lines.append(fit(((" " + str(text).rstrip(), None),), self.area.width or 80))
        self.set_lines(lines)

    @staticmethod
    def state(workload) -> list[Run]:
        """What the workload does now: its phase (with progress while it sets up), or how it ended."""
        if not workload.running:
            error = workload.error
            if error:
                return [("✗ failed: ", "crit"), (str(error), None)]
            return [("■ finished", "muted")]
        phase = workload.phase
        if phase == "stopping":
            return [("◼ stopping…", "warn")]
        if phase == "setup":
            progress = workload.progress
            done = f" {progress * 100:.0f}%" if isinstance(progress, (int, float)) else ""
            return [(f"◔ setting up{done}", "warn"), ("  s: stop", "muted")]
        return [("▶ running", "ok"), ("  s: stop", "muted")]
