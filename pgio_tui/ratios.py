"""Figures derived from two rates of the same tick or window: one definition each, used by the
views, the diff and the report alike. None when the denominator is zero or unknown."""

from __future__ import annotations


def share(part: float | None, whole: float | None) -> float | None:
    """part / whole (0-1)."""
    if part is None or not whole:
        return None
    return part / whole


def hit_ratio(reads: float | None, hits: float | None) -> float | None:
    """Shared-buffer hit ratio: hits / (hits + reads), the blocks found in shared buffers (0-1)."""
    if reads is None or hits is None:
        return None
    return share(hits, hits + reads)


def fpi_share(fpi: float | None, records: float | None) -> float | None:
    """Full-page images per WAL record (0-1; a record may carry more than one image)."""
    return share(fpi, records)


def per_op_ms(time_ms: float | None, ops: float | None) -> float | None:
    """Mean ms per operation from a time rate (ms/s) and an operation rate (1/s)."""
    return share(time_ms, ops)
