"""Findings as they form, live: while the live session records, the findings rules
(analysis/findings.py) read the file's last READ_SPAN_S every READ_EVERY_S on a thread, and each
finding is notified once, when its rule first fires; later readings that find it again stay quiet.
The whole file's findings are `pgio-tui findings`'s and replay's."""

from __future__ import annotations

import time

from textual.message import Message

READ_EVERY_S = 10.0  # not at every tick: a reading holds the GIL for a while
READ_SPAN_S = 600.0  # the rules take 0.34 s over an hour of ticks (bench/findings_speed.py): 10 min, ~0.06 s


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


def read_findings(path: str, span_s: float = READ_SPAN_S) -> list:
    """The findings of the last `span_s` of the recording at `path` so far; none while it cannot
    yet be read (just created, no ticks)."""
    import sqlite3

    from pgio_tui.analysis.align import AlignError, Window
    from pgio_tui.analysis.findings import findings_of
    from pgio_tui.store.reader import Recording, RecordingError
    from pgio_tui.store.timeline import tick_window
    try:
        with Recording(path) as rec:
            if rec.start_t is None or rec.end_t is None:
                return []
            origin = max(rec.start_t, rec.end_t - span_s)
            start, end = tick_window(rec, origin, rec.end_t)
            return findings_of(rec, Window("start", origin, rec.end_t, start, end))
    except (RecordingError, AlignError, OSError, sqlite3.Error):
        return []
