"""Player: where a replay is in a recording, how fast it moves, and where a key or a click sends it.

Textual-free, so it is tested without a terminal and any front end can drive it. The player keeps
a span of the recording's (tick, time) index around the position in two compact arrays, read from
the ticks' primary key as moves need it (`Player`), so stepping and playback are mostly bisects and
a seek costs the same in a week as in an hour; the caller reads the Frames it needs with
`Recording.frames()`. A file still being written is followed: `refresh()` reads what the writer
committed since, and a player at the end moves on to it.
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
SPAN = 1024  # tick numbers of the index read at once (16 KB): a seek reads one span, playback one in SPAN ticks
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
    """Position, speed and play/pause of one Recording (or Timeline).

    The position is an index into a span of the recording's (tick, time) index held in two
    compact arrays: every tick between `_lo` and `_hi` (tick numbers, both included), at most a few
    SPAN of them, read by one primary-key range query when a move leaves it. So opening, seeking
    and stepping cost the same in an hour and a week, and playback reads on a span at a time."""

    def __init__(self, rec: Any, *, speed: float = 1.0, playing: bool = True, start_t: float | None = None):
        self.rec = rec
        if rec.first_tick is None or rec.last_tick is None:
            raise ValueError(f"{rec.path} holds no ticks")
        self._ticks = array("q")
        self._ts = array("d")
        self._lo = self._hi = rec.first_tick - 1  # nothing read yet
        self.index = 0
        self.speed = speed if speed > 0 else 1.0
        self.playing = playing
        self.follow = not self._closed()  # no `stop` event yet: the writer may still be at it
        self.moments: list[Moment] = []
        self._goto(rec.first_tick)  # also sets clock_t, the playback clock (recording time, between ticks)
        if start_t is not None:
            self.seek_nearest(start_t)

    def _closed(self) -> bool:
        return bool(self.rec.events(["stop"]))

    # --- the span of the index in memory --------------------------------------------------------

    def _load(self, lo: int, hi: int) -> None:
        """The span: every tick numbered lo..hi, one range query on the primary key."""
        ticks, ts = array("q"), array("d")
        for tick, t, _ in self.rec.rows([], lo, hi):
            ticks.append(tick)
            ts.append(t)
        self._ticks, self._ts, self._lo, self._hi = ticks, ts, lo, hi

    def _goto(self, tick: int) -> int:
        """To `tick`, which the recording holds (read around it when it is not in the span)."""
        if not self._lo <= tick <= self._hi:
            self._load(max(self.rec.first_tick, tick - SPAN // 2), min(self.rec.last_tick, tick + SPAN // 2))
        return self._seek_index(bisect_right(self._ticks, tick) - 1)

    def _seek_index(self, i: int) -> int:
        self.index = i
        self.clock_t = self._ts[i]
        return self._ticks[i]

    def _read_on(self) -> None:
        """A span from the position on, past the current one's end (the next tick at least)."""
        tick, nxt = self.tick, self.rec.tick_after(self._hi)
        self._load(tick, self.rec.last_tick if nxt is None else min(self.rec.last_tick, max(tick + SPAN, nxt)))
        self.index = 0

    def _read_back(self) -> None:
        """A span up to the position, from before the current one's start (the tick before at least)."""
        tick, prev = self.tick, self.rec.tick_before(self._lo)
        lo = self.rec.first_tick if prev is None else max(self.rec.first_tick, min(tick - SPAN, prev))
        self._load(lo, tick)
        self.index = len(self._ticks) - 1

    def _move(self, n: int) -> int:
        """n ticks on from the position (back when negative), clamped to the recording."""
        i = self.index + n
        while i >= len(self._ticks) and self._hi < self.rec.last_tick:
            i -= len(self._ticks) - 1
            self.index = len(self._ticks) - 1
            self._read_on()
        while i < 0 and self._lo > self.rec.first_tick:
            self.index = 0
            self._read_back()
            i += len(self._ticks) - 1
        return self._seek_index(max(0, min(len(self._ticks) - 1, i)))

    def _ahead(self, n: int) -> None:
        """At least n ticks after the position in the span, or the recording's last."""
        while len(self._ticks) - 1 - self.index < n and self._hi < self.rec.last_tick:
            self._read_on()

    # --- where ----------------------------------------------------------------------------------

    @property
    def tick(self) -> int:
        return self._ticks[self.index]

    @property
    def t(self) -> float:
        return self._ts[self.index]

    @property
    def start_t(self) -> float:
        return self.rec.start_t

    @property
    def end_t(self) -> float:
        return self.rec.end_t

    @property
    def elapsed(self) -> float:
        return self.t - self.start_t

    @property
    def at_start(self) -> bool:
        return self.tick == self.rec.first_tick

    @property
    def at_end(self) -> bool:
        return self.tick == self.rec.last_tick

    def __len__(self) -> int:
        """The recording's ticks (counted on the first ask: a lazy recording has not)."""
        return self.rec.tick_count

    def tick_since(self, t: float) -> int:
        """The first tick taken at or after `t`, the position at most: where a window ending at the
        position starts."""
        if self._ts[0] < t or self._lo <= self.rec.first_tick:  # the span reaches back to it
            return self._ticks[min(self.index, bisect_left(self._ts, t))]
        tick = self.rec.tick_at(t)  # the last tick at or before t
        if next(iter(self.rec.rows([], tick, tick)))[1] < t:
            tick = self.rec.tick_after(tick)
        return self.tick if tick is None else min(tick, self.tick)

    # --- moving ---------------------------------------------------------------------------------

    def seek_tick(self, tick: int) -> int:
        """To `tick`, or to the last tick before it (a tick in a gap), clamped to the recording."""
        tick = max(self.rec.first_tick, min(self.rec.last_tick, tick))
        if self._lo <= tick <= self._hi and self._ticks and self._ticks[0] <= tick:
            return self._seek_index(bisect_right(self._ticks, tick) - 1)
        return self._goto(self.rec.tick_before(tick + 1))

    def seek_time(self, t: float) -> int:
        """To the last tick taken at or before `t` (the first when `t` is earlier)."""
        ts = self._ts
        if ts[0] <= t and (t < ts[-1] or self._hi >= self.rec.last_tick):  # in the span
            return self._seek_index(max(0, bisect_right(ts, t) - 1))
        return self._goto(self.rec.tick_at(t))

    def seek_nearest(self, t: float) -> int:
        """To the tick taken closest to `t`: a typed time (to the second) names the tick shown at
        that second, not the one before it."""
        self.seek_time(t)
        if self.t < t:
            self._ahead(1)
            i = self.index
            if i + 1 < len(self._ts) and self._ts[i + 1] - t < t - self._ts[i]:
                self._seek_index(i + 1)
        return self.tick

    def step(self, n: int) -> int:
        """n ticks forward (back when negative); playback pauses, as in atop and below."""
        self.playing = False
        return self._move(n)

    def home(self) -> int:
        return self._goto(self.rec.first_tick)

    def end(self) -> int:
        return self._goto(self.rec.last_tick)

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
        self._ahead(MAX_BATCH + 1)  # enough read to tell how far the clock goes
        old = self.index
        last = len(self._ticks) - 1
        if self.speed == MAX:
            new = min(last, old + MAX_BATCH)
        else:
            self.clock_t += max(0.0, wall_dt) * self.speed
            new = min(bisect_right(self._ts, self.clock_t) - 1, old + MAX_BATCH, last)
            if new == old + MAX_BATCH:  # too slow to keep up: drop the backlog instead of growing it
                self.clock_t = self._ts[new]
        self.index = max(old, new)
        if self.at_end:
            if self.follow:  # a new tick shows as soon as it is read, without credit piling up
                self.clock_t = min(self.clock_t, self.t + FOLLOW_SLACK)
            else:
                self.clock_t = self.t
                self.playing = False
        return self.index - old

    def refresh(self) -> int:
        """Pick up ticks a writer committed since; returns how many. A playing player at the end
        plays on into them at its speed (at once at 1x and up: its clock ran on while it waited)."""
        if not self.follow:
            return 0
        new = self.rec.refresh()
        if self._closed():
            self.follow = False
        return new
