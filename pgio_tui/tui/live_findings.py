"""Findings as they form, live: while the live session records, the findings rules
(analysis/findings.py) read the file so far every READ_EVERY_S on a thread, and each finding is
notified once, when its rule first fires; later readings that find it again stay quiet."""

from __future__ import annotations

import time

from textual.message import Message

READ_EVERY_S = 10.0  # the rules read the whole file (~0.1 s an hour of ticks): not at every tick


class FindingsRead(Message):
    """One reading of the recording's findings (a thread worker's)."""

    def __init__(self, found: list):
        super().__init__()
        self.found = found


class FindingsWatch:
    """When the next reading is due, and which findings were told."""

    def __init__(self, every_s: float = READ_EVERY_S, clock=time.monotonic):
        self.every_s, self.clock = every_s, clock
        self.told: set[str] = set()
        self.last: set[str] = set()  # the rule ids of the last reading
        self.readings = 0  # readings finished
        self._next: float | None = None
        self._busy = False

    def due(self) -> bool:
        """True once per READ_EVERY_S (the first after one interval of recording), never while one runs."""
        now = self.clock()
        if self._next is None:
            self._next = now + self.every_s
        if self._busy or now < self._next:
            return False
        self._busy, self._next = True, now + self.every_s
        return True

    def new(self, found: list) -> list:
        """The findings not told before (by rule id), now counted as told."""
        self._busy = False
        self.readings += 1
        self.last = {f.id for f in found}
        out = [f for f in found if f.id not in self.told]
        self.told.update(f.id for f in out)
        return out


def read_findings(path: str) -> list:
    """The findings of the recording at `path` so far (from its first tick); none while it cannot
    yet be read (just created, no ticks)."""
    from pgio_tui.analysis.align import AlignError
    from pgio_tui.analysis.findings import findings_of_file
    from pgio_tui.store.reader import RecordingError
    try:
        return findings_of_file(path, "start")
    except (RecordingError, AlignError, OSError):
        return []
