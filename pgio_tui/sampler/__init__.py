"""The tick loop: owns the clock, asks every source once per tick, and turns counters into rates.

Ticks follow a fixed schedule (start + k * interval), so there is no drift. A late tick is
recorded with how late it was; ticks that could not run at all (the machine was suspended, the
sampler stalled) are skipped numbers plus a `gap` event, never silently dropped. Counters become
per-second rates here and nowhere else; a counter that goes backwards (stats reset, server
restart) gives no rate for that tick and an event instead of a nonsense spike.

loop.py holds the Sampler (set-up, schedule, one frame from every source); postgres_tick.py what
one PostgreSQL sample adds to a frame (reconnects, restarts, resets, settings changes);
rates.py the pure arithmetic (rates, statement latency, sessions and waits).
"""

from pgio_tui.sampler.loop import MAX_INTERVAL, MIN_INTERVAL, Sampler, UnknownDevices

__all__ = ["MAX_INTERVAL", "MIN_INTERVAL", "Sampler", "UnknownDevices"]
