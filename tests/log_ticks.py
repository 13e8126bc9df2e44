"""Which tick a recording may put a moment the server logged at: the first tick that answered at or
after the log line's time stamp, or the next one when that answer came within ANSWER_S of the stamp.
A tick's time is when the server answered; its reads were made up to the statement's length before
it, so a tick just after the stamp may have read the state from just before (seen once on 18: a
checkpoint's end 1 ms before a tick's answer, seen by the next tick)."""

from __future__ import annotations

ANSWER_S = 0.05


def ticks_for(ticks: list[tuple[int, float]], t: float) -> set[int]:
    """The ticks (tick, time) that may hold a moment logged at t."""
    first, at = next((tick, tt) for tick, tt in ticks if tt >= t)
    return {first, first + 1} if at - t < ANSWER_S else {first}
