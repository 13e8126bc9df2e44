"""The Frames of replay's history window, kept so the next window reads only what it does not share.

Textual-free. A step back, a jump of a few seconds, a zoom or an event nearby moves the window by
a few ticks, yet a seek rebuilt all of it (301 Frames at 5 min, ~40 ms on a week). A tick's Frame
never changes once written (a followed file only grows at its end), so the Frames the new window
shares with the one held are reused and only the ticks before and after them are read. They are
read deferred (store/rebuild.py's DeferredFrame): what no pane asks for is never decoded.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from pgio_tui.frame import Frame

KEPT_TICKS = 1800  # a window longer than this (a zoom past 30 min at 1 s) is read whole and not kept


class WindowFrames:
    """The Frames of ticks [first, last] of a Recording (or Timeline) last asked for."""

    def __init__(self, rec: Any, kept: int = KEPT_TICKS):
        self.rec = rec
        self.kept = kept
        self.frames: list[Frame] = []

    def read(self, first: int, last: int) -> list[Frame]:
        """The Frames of ticks first..last: the ones held reused, the rest read from the recording."""
        held = self.frames
        if held and held[0].tick <= last and held[-1].tick >= first:
            ticks = [f.tick for f in held]
            before = list(self.rec.frames(first, held[0].tick - 1, deferred=True)) if first < held[0].tick else []
            after = list(self.rec.frames(held[-1].tick + 1, last, deferred=True)) if last > held[-1].tick else []
            frames = before + held[bisect_left(ticks, first):bisect_right(ticks, last)] + after
        else:
            frames = list(self.rec.frames(first, last, deferred=True))
        self.frames = frames if len(frames) <= self.kept else []
        return frames

    def extend(self, frames: Iterable[Frame], first: int) -> list[Frame]:
        """Frames read on after the last one held (playback); the window now starts at tick `first`."""
        frames = list(frames)
        held = self.frames
        if held and frames and frames[0].tick > held[-1].tick:
            held += frames
            del held[:bisect_left([f.tick for f in held], first)]
            if len(held) > self.kept:
                self.frames = []
        else:
            self.frames = []  # not the window's continuation: the next read() reads it whole
        return frames
