"""Counters that PostgreSQL publishes in bursts, spread back into a steady rate.

Backends do not publish their statistics as they work: they flush them at most about once a
second (pg_stat_io, pg_stat_database, pg_stat_wal), and before 17 the backends' share of
pg_stat_bgwriter (buffers_backend) arrives in lumps of ~1024 every few seconds. Sampled every
tick, such a counter reads 0, 0, 0, 6534, 0, 0, 6767 while the disk writes steadily. Each
counter's publication cadence is watched (ticks between two rises, the longest of the last few);
a rise that follows quiet ticks is paid out evenly over that many ticks, so the rate is steady
and the total is unchanged (it lags by at most one publication interval). A rise after a longer silence
than MAX_SPREAD_S is shown at once: that was a real pause, not a slow publication.

Counters that the checkpointer and the background writer publish as they work are not spread
(pg_counters.PUBLISHED_AS_WRITTEN): their timing is the point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_SPREAD_S = 15.0  # PostgreSQL 15+ flushes an idle backend's statistics within 10 s
CADENCE_MEMORY = 4  # publications whose gaps make the cadence


@dataclass(slots=True)
class _Counter:
    last_rise: int  # tick of the last publication (or of the baseline)
    pool: float = 0.0  # published but not yet paid out
    left: int = 0  # ticks to pay the pool over
    gaps: list[int] = field(default_factory=list)  # the last few gaps between publications


class Spreader:
    """Per-counter state between ticks; `delta` turns this tick's raw delta into the paid-out one."""

    def __init__(self) -> None:
        self._c: dict[str, _Counter] = {}

    def reset(self) -> None:
        self._c.clear()

    def delta(self, name: str, delta: float | None, tick: int, dt: float | None,
              final: bool = False) -> float | None:
        """This tick's share of the counter's published total; None when unknown (and forget it).
        `final`: the session's last tick, so whatever is still owed is paid now."""
        if delta is None or delta < 0 or not dt:
            self._c.pop(name, None)
            return None
        c = self._c.get(name)
        if c is None:
            self._c[name] = _Counter(last_rise=tick - 1, pool=delta, left=1)
            c = self._c[name]
        elif delta > 0:
            gap = tick - c.last_rise
            c.pool += delta
            if gap * dt > MAX_SPREAD_S:  # a real pause, not a slow publication: show it now
                c.gaps, c.left = [], 1
            else:
                c.gaps = (c.gaps + [gap])[-CADENCE_MEMORY:]
                c.left = max(c.gaps)
        if delta > 0:
            c.last_rise = tick
        if final or c.left <= 1:
            pay, c.pool, c.left = c.pool, 0.0, 0
            return pay
        # Whole events per tick (counters count events, and the recorder stores rates so), the
        # remainder carried: the pool is an integer count, so the total stays exact.
        pay = float(math.floor(c.pool / c.left + 0.5))
        c.pool -= pay
        c.left -= 1
        return pay
