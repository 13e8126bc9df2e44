"""What the screens read from the checkpoint tracker's output (sources/checkpoint.py): a finished
checkpoint's buffers, the "too frequently" warning among its notes.

Apart from the tracker so that the monitor's first frame does not import it (its log-line patterns
and dataclasses: ~2.5 ms); the live sampler imports the tracker after the first paint.
"""

from __future__ import annotations

import re

TOO_FREQUENT = re.compile(r"checkpoints are occurring too frequently \((?P<s>\d+) seconds? apart\)")


def too_frequent(text: str) -> int | None:
    """Seconds apart, when an event's text is the server's "checkpoints are occurring too
    frequently" warning (a `note` event of the tracker), else None."""
    m = TOO_FREQUENT.search(text)
    return int(m["s"]) if m else None


def checkpoint_buffers(row: dict) -> int | None:
    """Buffers a finished checkpoint wrote: the server log's own figure when it had the line (it
    is what the checkpointer counted; 14-17 include SLRU pages), else the statistics counters'."""
    return row.get("log_buffers") if row.get("log_buffers") is not None else row.get("buffers")
