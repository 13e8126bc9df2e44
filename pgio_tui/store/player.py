"""Player: where a replay is in a recording, how fast it moves, and where a key or a click sends it.

Textual-free, so it is tested without a terminal and any front end can drive it. The player keeps
the recording's (tick, time) index in two compact arrays (16 bytes a tick: 1.4 MB for a day at
1 Hz), so stepping, seeking and playback are bisects with no SQL; the caller reads the Frames it
needs with `Recording.frames()`. A file still being written is followed: `refresh()` appends the
ticks the writer committed since, and a player at the end moves on to them.
"""

from __future__ import annotations

import math
import re
import time
from array import array
from bisect import bisect_left, bisect_right
from datetime import datetime, timedelta
from typing import Any

from pgio_tui.format import clock as fmt_clock
from pgio_tui.store.moments import Moment

MAX = math.inf  # "as fast as possible"
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0, MAX)
MAX_BATCH = 200  # ticks one advance() may move: bounds the frames a caller reads per timer tick
FOLLOW_SLACK = 5.0  # recording seconds the clock may run past the last tick while following


def speed_label(speed: float) -> str:
    return "max" if speed == MAX else f"{speed:g}×"


def clock(t: float) -> str:
    """Local wall time of a recording moment, hh:mm:ss."""
    return time.strftime("%H:%M:%S", time.localtime(t))


def hms(seconds: float) -> str:
    """An elapsed time as h:mm:ss (m:ss under an hour)."""
    return fmt_clock(max(0.0, seconds))


# --- `j`: what the user may type ------------------------------------------------------------------

_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|m|sec|s)?", re.I)


def parse_seconds(text: str) -> float:
    """'90', '90s', '5m', '1h30m', '1:30' (m:ss), '1:02:03' (h:mm:ss) -> seconds."""
    text = text.strip().lower().replace(" ", "")
    if not text:
        raise ValueError("empty time")
    if ":" in text:
        parts = text.split(":")
        if len(parts) > 3 or not all(re.fullmatch(r"\d+(\.\d+)?", p) for p in parts):
            raise ValueError(f"not a time: {text!r}")
        total = 0.0
        for p in parts:
            total = total * 60 + float(p)
        return total
    pos, total = 0, 0.0
    while pos < len(text):
        m = _PART.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a duration: {text!r} (e.g. 90s, 5m, 1h30m)")
        total += float(m.group(1)) * _UNITS[(m.group(2) or "")]
        pos = m.end()
    return total


def parse_jump(text: str, *, start_t: float, end_t: float, now_t: float) -> float:
    """Where `j TEXT` goes, as a recording wall time:

    - `hh:mm:ss` (three fields): that time of day during the recording (local time);
    - `+5m`, `-30s`, `+1:30`: relative to the current position `now_t`;
    - `90s`, `5m`, `1h30m`, `1:30` (m:ss), `90`: elapsed since the recording's start;
    - `2023-11-14 22:15:00` (ISO): that moment.
    Raises ValueError with a message fit for the user.
    """
    s = text.strip()
    if not s:
        raise ValueError("type a time: hh:mm:ss, +5m, -30s or an elapsed time like 90s or 1:30")
    if s[0] in "+-":
        d = parse_seconds(s[1:])
        return now_t + (d if s[0] == "+" else -d)
    if re.fullmatch(r"\d{1,2}:\d{2}:\d{2}(\.\d+)?", s):
        return _time_of_day(s, start_t, end_t)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[ T].*", s):
        try:
            return datetime.fromisoformat(s).timestamp()
        except ValueError:
            raise ValueError(f"not a date and time: {s!r}") from None
    return start_t + parse_seconds(s)


def _time_of_day(s: str, start_t: float, end_t: float) -> float:
    """hh:mm:ss on the recording's first day, or a later day the recording reaches."""
    h, m, sec = s.split(":")
    day = datetime.fromtimestamp(start_t).replace(hour=0, minute=0, second=0, microsecond=0)
    offset = timedelta(hours=int(h), minutes=int(m), seconds=float(sec))
    if offset >= timedelta(days=1):
        raise ValueError(f"not a time of day: {s!r}")
    best = None
    while True:
        t = (day + offset).timestamp()
        if best is None or abs(_distance(t, start_t, end_t)) < abs(_distance(best, start_t, end_t)):
            best = t
        if t > end_t:
            return best
        day += timedelta(days=1)


def _distance(t: float, a: float, b: float) -> float:
    return 0.0 if a <= t <= b else (t - a if t < a else t - b)


# --- the player ---------------------------------------------------------------------------------

class Player:
    """Position (an index into the recording's ticks), speed and play/pause of one Recording."""

    def __init__(self, rec: Any, *, speed: float = 1.0, playing: bool = True, start_t: float | None = None):
        self.rec = rec
        self.ticks = array("q")
        self.ts = array("d")
        self._append_index(None)
        if not self.ticks:
            raise ValueError(f"{rec.path} holds no ticks")
        self.speed = speed if speed > 0 else 1.0
        self.playing = playing
        self.follow = not self._closed()  # no `stop` event yet: the writer may still be at it
        self.moments: list[Moment] = []
        self.index = 0
        self.clock_t = self.ts[0]  # the playback clock, in recording time: between ticks while playing
        if start_t is not None:
            self.seek_nearest(start_t)

    def _append_index(self, after: int | None) -> int:
        n = len(self.ticks)
        start = None if after is None else after + 1
        for tick, t, _ in self.rec.rows([], start):
            self.ticks.append(tick)
            self.ts.append(t)
        return len(self.ticks) - n

    def _closed(self) -> bool:
        return bool(self.rec.events(["stop"]))

    # --- where ----------------------------------------------------------------------------------

    @property
    def tick(self) -> int:
        return self.ticks[self.index]

    @property
    def t(self) -> float:
        return self.ts[self.index]

    @property
    def start_t(self) -> float:
        return self.ts[0]

    @property
    def end_t(self) -> float:
        return self.ts[-1]

    @property
    def elapsed(self) -> float:
        return self.t - self.start_t

    @property
    def at_end(self) -> bool:
        return self.index == len(self.ticks) - 1

    def __len__(self) -> int:
        return len(self.ticks)

    def index_of_tick(self, tick: int) -> int:
        """The index of `tick`, or of the last tick before it (a tick in a gap), clamped."""
        return max(0, min(len(self.ticks) - 1, bisect_right(self.ticks, tick) - 1))

    # --- moving ---------------------------------------------------------------------------------

    def seek_index(self, index: int) -> int:
        self.index = max(0, min(len(self.ticks) - 1, index))
        self.clock_t = self.ts[self.index]
        return self.tick

    def seek_tick(self, tick: int) -> int:
        return self.seek_index(self.index_of_tick(tick))

    def seek_time(self, t: float) -> int:
        """To the last tick taken at or before `t` (the first when `t` is earlier)."""
        return self.seek_index(bisect_right(self.ts, t) - 1)

    def seek_nearest(self, t: float) -> int:
        """To the tick taken closest to `t`: a typed time (to the second) names the tick shown at
        that second, not the one before it."""
        i = bisect_left(self.ts, t)
        if i >= len(self.ts) or (i > 0 and t - self.ts[i - 1] <= self.ts[i] - t):
            i -= 1
        return self.seek_index(i)

    def step(self, n: int) -> int:
        """n ticks forward (back when negative); playback pauses, as in atop and below."""
        self.playing = False
        return self.seek_index(self.index + n)

    def home(self) -> int:
        return self.seek_index(0)

    def end(self) -> int:
        return self.seek_index(len(self.ticks) - 1)

    def jump(self, text: str) -> int:
        """`j`: see parse_jump() for what the text may be."""
        return self.seek_nearest(parse_jump(text, start_t=self.start_t, end_t=self.end_t, now_t=self.t))

    def next_moment(self, kinds: tuple[str, ...] | None = None) -> Moment | None:
        """The first moment after the current tick (of the given kinds); the position moves there."""
        for m in self.moments[bisect_right([x.tick for x in self.moments], self.tick):]:
            if kinds is None or m.kind in kinds:
                self.seek_tick(m.tick)
                return m
        return None

    def previous_moment(self, kinds: tuple[str, ...] | None = None) -> Moment | None:
        for m in reversed(self.moments[:bisect_left([x.tick for x in self.moments], self.tick)]):
            if kinds is None or m.kind in kinds:
                self.seek_tick(m.tick)
                return m
        return None

    # --- playing --------------------------------------------------------------------------------

    def toggle(self) -> bool:
        self.playing = not self.playing
        if self.playing and self.at_end and not self.follow:
            self.home()  # play again from the start, as a media player does
        self.clock_t = self.t
        return self.playing

    def faster(self) -> float:
        self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])
        return self.speed

    def slower(self) -> float:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])
        return self.speed

    def advance(self, wall_dt: float) -> int:
        """Move on by `wall_dt` seconds of real time at the current speed; returns ticks moved.

        At most MAX_BATCH ticks a call ("max" moves that many every call). At the end of a closed
        recording playback pauses; a followed one waits for refresh() to bring more ticks.
        """
        if not self.playing:
            return 0
        old = self.index
        last = len(self.ticks) - 1
        if self.speed == MAX:
            new = min(last, old + MAX_BATCH)
        else:
            self.clock_t += max(0.0, wall_dt) * self.speed
            new = min(bisect_right(self.ts, self.clock_t) - 1, old + MAX_BATCH, last)
            if new == old + MAX_BATCH:  # too slow to keep up: drop the backlog instead of growing it
                self.clock_t = self.ts[new]
        self.index = max(old, new)
        if self.index == last:
            if self.follow:  # a new tick shows as soon as it is read, without credit piling up
                self.clock_t = min(self.clock_t, self.ts[last] + FOLLOW_SLACK)
            else:
                self.clock_t = self.ts[last]
                self.playing = False
        return self.index - old

    def refresh(self) -> int:
        """Pick up ticks a writer committed since; returns how many. A playing player at the end
        plays on into them at its speed (at once at 1x and up: its clock ran on while it waited)."""
        if not self.follow:
            return 0
        new = self.rec.refresh()
        added = self._append_index(self.ticks[-1]) if new else 0
        if self._closed():
            self.follow = False
        return added
