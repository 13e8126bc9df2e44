"""What is degraded in this session and why: a banner at the top of the live view, the same list
in help, and warnings that happen mid-session as notifications.

The notes come from the sampler (missing privileges, no pg_stat_statements, the server log not
readable or not attributable, OS figures remote or absent). They hold server text (a setting's
value), so they are shown as plain text, never as markup, with control characters made visible.
"""

from __future__ import annotations

import re
import time

from rich.text import Text
from textual.widgets import Static

from pgio_tui.frame import Frame
from pgio_tui.safe_text import printable

DISMISS_KEY = "x"
WARN_KINDS = ("note", "error")  # mid-session events a person should see when they happen
WARN_REPEAT_S = 300.0  # the same warning is toasted again after this long, not at every occurrence


def notes_text(notes: list[str], *, hint: bool = True) -> Text:
    out = Text()
    out.append(f"degraded ({len(notes)}): ", style="bold")
    out.append("some figures are missing or estimated here, because", style="italic")
    for n in notes:
        out.append("\n • ")
        out.append(printable(n))
    if hint:
        out.append(f"\n{DISMISS_KEY}: dismiss · ?: this list stays in help", style="dim")
    return out


class DegradedBanner(Static):
    """Listed at start; stays until dismissed (x), so nobody reads counters mode as log mode."""

    DEFAULT_CSS = """
    DegradedBanner {
        height: auto; max-height: 9; padding: 0 1;
        background: $warning 12%; border-left: thick $warning;
    }
    """

    def __init__(self, notes: list[str], *, id: str | None = None):
        super().__init__(notes_text(notes) if notes else "", id=id)
        self.notes = list(notes)
        self.display = bool(notes)

    def dismiss(self) -> None:
        self.display = False


def help_section(notes: list[str]) -> Text:
    """The help screen's part: the same list, or that nothing is degraded."""
    if not notes:
        return Text("Nothing degraded in this session: every source is available.\n")
    return notes_text(notes, hint=False).append("\n")


def warnings_of(frame: Frame) -> list[str]:
    """Events of a live frame to show as notifications (tick 0's notes are the banner's)."""
    if frame.tick == 0:
        return []
    return [printable(e.text) for e in frame.events if e.kind in WARN_KINDS and e.text]


class WarningGate:
    """Lets a warning through as a notification once per WARN_REPEAT_S, whatever its figures: under
    a heavy load "checkpoints are occurring too frequently (7 seconds apart)" comes at nearly every
    checkpoint, and each toast costs a few layouts of the whole screen (~10 ms) and the reader's eye.
    The next one let through says how many like it were held back; every one stays in the session's
    events (recorded; checkpoint warnings are listed on the checkpoints screen, H)."""

    def __init__(self, repeat_s: float = WARN_REPEAT_S, clock=time.monotonic):
        self._repeat_s = repeat_s
        self._clock = clock
        self._seen: dict[str, tuple[float, int]] = {}  # warning without its figures -> (shown at, held back)

    def admit(self, texts: list[str]) -> list[str]:
        out = []
        now = self._clock()
        for text in texts:
            key = re.sub(r"\d+(\.\d+)?", "#", text)
            shown, held = self._seen.get(key, (None, 0))
            if shown is not None and now - shown < self._repeat_s:
                self._seen[key] = (shown, held + 1)
                continue
            self._seen[key] = (now, 0)
            if held:
                text += f" ({held} more since it was last shown)"
            out.append(text)
        return out
