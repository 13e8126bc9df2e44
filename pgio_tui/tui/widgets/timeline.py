"""Timeline: replay's two lines under the panes: where we are (time, speed, settings, workload) and a
scrubber of the whole recording with its moments marked. A click on the scrubber seeks there.

The lines are built by plain functions (`info_line`, `scrubber_line`) so they are tested without a
terminal; the widget only draws them and turns a click into a `Seek` message.
"""

from __future__ import annotations

from textual import events
from textual.message import Message

from pgio_tui.store.moments import Moment
from pgio_tui.store.player import Player, clock, hms, speed_label
from pgio_tui.tui.plot import MARKS, Line, Run
from pgio_tui.tui.widgets.lines import LinesView
from pgio_tui.tui.widgets.status import fit_groups

# moment kind -> (mark, style); the kinds the charts mark too keep the charts' marks
TIMELINE_MARKS = {
    **MARKS,
    "checkpoint_start": ("[", "ckpt-span"), "checkpoint_end": ("]", "ckpt-span"),
    "latency_high": ("↑", "crit"), "dirty_above": ("≈", "warn"), "dirty_below": ("≈", "muted"),
    "finding": ("!", "warn"),  # analysis/findings_out.finding_moments
}
# when several moments share a column, the one earliest here is drawn
PRECEDENCE = ("gap", "server_restart", "reconnect", "annotation", "workload_start", "workload_stop",
              "setting_change", "stats_reset", "finding", "latency_high", "dirty_above", "dirty_below",
              "checkpoint_start", "checkpoint_end")
KEY_SETTINGS = (  # (setting, label) shown on the info line, most telling first
    ("shared_buffers", "sb"), ("checkpoint_timeout", "cpt"), ("max_wal_size", "maxwal"),
    ("backend_flush_after", "bfa"), ("checkpoint_completion_target", "cct"), ("bgwriter_lru_maxpages", "lru"),
    ("vm.dirty_background_ratio", "dirty_bg%"), ("vm.dirty_ratio", "dirty%"),
    ("vm.dirty_background_bytes", "dirty_bg"), ("vm.dirty_bytes", "dirty_b"),
)


def merge_runs(runs: list[Run]) -> Line:
    """Adjacent runs of one style as one run (fewer segments to the terminal)."""
    out: list[Run] = []
    for text, style in runs:
        if out and out[-1][1] == style:
            out[-1] = (out[-1][0] + text, style)
        else:
            out.append((text, style))
    return tuple(out)


def column_of(t: float, start_t: float, end_t: float, width: int) -> int:
    if width <= 1 or end_t <= start_t:
        return 0
    return max(0, min(width - 1, int(round((t - start_t) / (end_t - start_t) * (width - 1)))))


def time_at(x: int, start_t: float, end_t: float, width: int) -> float:
    """The recording time a scrubber column stands for (the inverse of column_of)."""
    if width <= 1:
        return start_t
    return start_t + (end_t - start_t) * max(0, min(width - 1, x)) / (width - 1)


def moment_marks(width: int, start_t: float, end_t: float, moments: list[Moment]) -> dict[int, Run]:
    """The mark of each scrubber column that has moments: the kind earliest in PRECEDENCE. A pass
    over every moment (a week holds ~40,000), so the widget keeps it until they or the span change."""
    rank = {k: i for i, k in enumerate(PRECEDENCE)}
    best: dict[int, Moment] = {}
    for m in moments:
        x = column_of(m.t, start_t, end_t, width)
        if x not in best or rank.get(m.kind, 99) < rank.get(best[x].kind, 99):
            best[x] = m
    return {x: TIMELINE_MARKS.get(m.kind, ("·", "mark")) for x, m in best.items()}


def scrubber_line(width: int, start_t: float, end_t: float, pos_t: float, moments: list[Moment],
                  marks: dict[int, Run] | None = None) -> Line:
    """━ up to the position, ─ after it, ● at it; a moment's mark where it happened (`marks`:
    moment_marks() of these, when kept)."""
    if width <= 0:
        return ()
    if marks is None:
        marks = moment_marks(width, start_t, end_t, moments)
    pos = column_of(pos_t, start_t, end_t, width)
    runs: list[Run] = []
    for x in range(width):
        if x == pos:
            runs.append(("●", "primary"))
        elif x in marks:
            runs.append(marks[x])
        else:
            runs.append(("━", "accent") if x < pos else ("─", "axis"))
    return merge_runs(runs)


def key_settings(settings: dict[str, str]) -> list[list[Run]]:
    """One group of runs per key setting the recording has, most telling first."""
    return [[(f"{label} ", "muted"), (f"{settings[name]}  ", None)] for name, label in KEY_SETTINGS
            if settings.get(name) not in (None, "")]


def info_line(player: Player, width: int, *, settings: dict[str, str], workload: str = "", note: str = "") -> Line:
    """State, speed, time of day, elapsed / duration, tick, then what fits: following, the moment
    just jumped to, workload, key settings."""
    state = ("▶ ", "ok") if player.playing else ("⏸ ", "warn")
    groups: list[tuple[int, str, list[Run]]] = [
        (0, "l", [(" ", None), state, (speed_label(player.speed) + " ", "bold")]),
        (0, "l", [("│ ", "axis"), (clock(player.t) + " ", None)]),
        (0, "l", [("│ ", "axis"), (hms(player.elapsed), None),
                  (" / " + hms(player.end_t - player.start_t) + " ", "muted")]),
        (1, "l", [("│ ", "axis"), ("tick ", "muted"), (f"{player.tick} ", None)]),
        (1, "l", [("│ ", "axis"), ("● following ", "crit")] if player.follow else []),
        (2, "l", [("│ ", "axis"), (note + " ", "mark")] if note else []),
        (3, "l", [("│ ", "axis"), (workload + " ", None)] if workload else []),
    ]
    for i, runs in enumerate(key_settings(settings)):  # as many as fit, in order
        groups.append((4 + i, "l", ([("│ ", "axis")] if i == 0 else []) + runs))
    return fit_groups(groups, width)


class Timeline(LinesView):
    """Two lines: the info line and the clickable scrubber."""

    DEFAULT_CSS = """
    Timeline { height: 2; background: $surface; }
    """

    class Seek(Message):
        """The user clicked the scrubber: go to recording time `t`."""

        def __init__(self, t: float):
            super().__init__()
            self.t = t

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self._span = (0.0, 0.0)
        self._marks: tuple[list[Moment], tuple, dict[int, Run]] | None = None  # (moments, (width, span), marks)

    def draw(self, player: Player, *, settings: dict[str, str], workload: str = "", note: str = "") -> None:
        width = self.size.width or 80
        self._span = (player.start_t, player.end_t)
        shape = (width, *self._span)
        if self._marks is None or self._marks[0] is not player.moments or self._marks[1] != shape:
            self._marks = (player.moments, shape, moment_marks(width, *self._span, player.moments))
        self.set_lines([
            info_line(player, width, settings=settings, workload=workload, note=note),
            scrubber_line(width, player.start_t, player.end_t, player.t, player.moments, self._marks[2]),
        ])

    def on_click(self, event: events.Click) -> None:
        if event.y == 1 and self._span[1] > self._span[0]:
            event.stop()
            self.post_message(self.Seek(time_at(event.x, *self._span, self.size.width)))
