"""Whose I/O a device's figures are: the server's own processes' share of its device's reads and writes.

On a device shared with other programs (the root disk), its figures are mostly their I/O: an
experiment does not judge a setting's effect on them, a finding does not credit them to the server.
"""

from __future__ import annotations

import math
from typing import Any

from pgio_tui.analysis.align import Window
from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.store.timeline import Timeline

SHARED_BELOW_PCT = 50.0  # under this share of a device's I/O, the device's figures are others' more than the server's


def count(n: Any) -> float:
    """A number from the file: >= 0 and finite, else 0 (a recording is untrusted input)."""
    return float(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) and n > 0 else 0.0


def own_io_shares(rec: Recording | Timeline, win: Window,
                  role_devices: dict[str, str]) -> dict[str, dict[str, float | None]]:
    """Per role (PGDATA, WAL): at most what share (%) of its device's bytes the server's own processes
    moved in the run: their /proc/<pid>/io read_bytes against the device's kB read, write_bytes (the
    bytes they dirtied: at least what they made storage write) against its kB written, and both
    together. An upper bound: a process's bytes may have gone to another device. Empty without
    /proc/<pid>/io (another host, no permission): then nothing says whose I/O the device did."""
    if win.start_tick is None or not role_devices:
        return {}
    try:
        b = rec.io_bytes(role_devices.values(), win.start_tick, win.end_tick)
    except RecordingError:  # a file without these tables' columns: whose I/O it was is unknown
        return {}
    if b is None:
        return {}
    out = {}
    for role, dev in role_devices.items():
        dev_r, dev_w = b.devices[dev]
        out[role] = {"read": _share(b.own_read, dev_r), "write": _share(b.own_written, dev_w),
                     "all": _share(count(b.own_read) + count(b.own_written), count(dev_r) + count(dev_w))}
    return out


def _share(own: Any, device: Any) -> float | None:
    """own / device in %, at most 100; None when the device moved nothing."""
    own, device = count(own), count(device)
    return min(100.0, 100 * own / device) if device else None
