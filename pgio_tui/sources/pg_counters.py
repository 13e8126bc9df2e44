"""Counters and wait events read the same way whatever the version (13-16 vs 16+/17+ views).

Checkpoints moved from pg_stat_bgwriter to pg_stat_checkpointer (17), buffer writes per source
came with pg_stat_io (16), and 17 renamed wait events: the sampler sees one shape.
"""

from __future__ import annotations

from typing import Any

from pgio_tui import metrics as M

# Backend types whose pg_stat_io writes get their own metric; the rest add up to writes.other.
NAMED_WRITERS = {"checkpointer": "checkpointer", "background writer": "bgwriter",
                 "client backend": "backend", "autovacuum worker": "autovacuum"}



def checkpoint_counters(bgwriter: dict, checkpointer: dict | None) -> dict[str, float | None]:
    """Started/done counts, buffers, and write/sync ms of checkpoints, whatever the version.

    13-16 keep them in pg_stat_bgwriter; 17+ in pg_stat_checkpointer (18 adds num_done, the
    only exact completion counter). Restartpoints count as checkpoints on a standby.
    """
    if checkpointer:
        c = checkpointer
        return {
            "started": c["num_timed"] + c["num_requested"]
            + c.get("restartpoints_timed", 0) + c.get("restartpoints_req", 0),
            "timed": c["num_timed"] + c.get("restartpoints_timed", 0),
            "done": (c["num_done"] + c.get("restartpoints_done", 0)) if "num_done" in c else None,
            "buffers": c["buffers_written"],
            "slru": c.get("slru_written"),
            "write_ms": c["write_time"], "sync_ms": c["sync_time"],
            "stats_reset": c.get("stats_reset"),
        }
    b = bgwriter
    return {
        "started": b["checkpoints_timed"] + b["checkpoints_req"], "timed": b["checkpoints_timed"],
        "done": None, "buffers": b["buffers_checkpoint"], "slru": None,
        "write_ms": b["checkpoint_write_time"], "sync_ms": b["checkpoint_sync_time"],
        "stats_reset": b.get("stats_reset"),
    }


_RELATION_SUMS = (0, 1, 3, 4, 2, 5, 6)  # io_rows' reads, writes, extends, fsyncs, writebacks, hits, evictions


def relation_totals(io_rows: list | None) -> tuple[dict[str, list[float | None]] | None, dict | None]:
    """From the tick's pg_stat_io rows (tick_sql.io_rows_sql): the relation rows' cumulative sums by
    backend type, [reads, writes, extends, fsyncs, writebacks, hits, evictions] (RawSample io), and
    over them all ({"evictions": n}, RawSample iosum). NULL cells (untracked) stay None. (None,
    None) without pg_stat_io."""
    if io_rows is None:
        return None, None
    out: dict[str, list[float | None]] = {}
    for bt, obj, _ctx, *vals in io_rows:
        if obj != "relation":  # 18's WAL rows are not buffer writes
            continue
        acc = out.setdefault(bt, [None] * len(_RELATION_SUMS))
        for i, k in enumerate(_RELATION_SUMS):
            if vals[k] is not None:
                acc[i] = (acc[i] or 0) + vals[k]
    return out, {"evictions": sum(v[6] or 0 for v in out.values())}


def writes_by_source(bgwriter: dict, io: dict | None) -> dict[str, float | None]:
    """Cumulative buffer writes per source, from pg_stat_io (16+) or pg_stat_bgwriter (13-15).

    Keys are the metric suffixes of writes.*, fsyncs.*, extends.*, plus writebacks.total.
    """
    if io:
        out: dict[str, Any] = {M.writes(v): 0.0 for v in NAMED_WRITERS.values()}  # sums, and fsyncs as read
        out.update({M.WRITES_OTHER: 0.0, M.FSYNCS_BACKEND: None, M.FSYNCS_CHECKPOINTER: None,
                    M.EXTENDS_BACKEND: None, M.WRITEBACKS_TOTAL: 0.0})
        for btype, (_r, w, e, fs, wb, _h, _ev) in io.items():
            key = M.writes(NAMED_WRITERS.get(btype, "other"))
            out[key] += w or 0
            out[M.WRITEBACKS_TOTAL] += wb or 0
            if btype == "client backend":
                out[M.FSYNCS_BACKEND], out[M.EXTENDS_BACKEND] = fs, e
            elif btype == "checkpointer":
                out[M.FSYNCS_CHECKPOINTER] = fs
        return out
    b = bgwriter
    return {
        M.WRITES_CHECKPOINTER: b.get("buffers_checkpoint"), M.WRITES_BGWRITER: b.get("buffers_clean"),
        M.WRITES_BACKEND: b.get("buffers_backend"), M.WRITES_AUTOVACUUM: None, M.WRITES_OTHER: None,
        M.FSYNCS_BACKEND: b.get("buffers_backend_fsync"), M.FSYNCS_CHECKPOINTER: None,
        M.EXTENDS_BACKEND: None, M.WRITEBACKS_TOTAL: None,
    }


# Counters the checkpointer and the background writer publish as they work (their own loop): rates
# shown as sampled. Every other counter is a backend's, flushed at most about once a second (before
# 17 buffers_backend in lumps), so the sampler spreads its bursts (pgio_tui/publication.py). From the
# catalog's `published` (metrics.py).
PUBLISHED_AS_WRITTEN = M.published_as_written()

# Checkpointer wait events (after normalising away 17's renames) that mean "not idle".
_CKPT_IDLE = {"checkpointermain", "checkpointershutdown"}


def normalise_wait(event: str | None) -> str | None:
    """17 renamed IO wait events (WALWrite -> WalWrite, ...): compare case-insensitively without '_'."""
    return event.replace("_", "").lower() if event else None


def checkpointer_wait(activity: list | None) -> str | None:
    """The checkpointer's normalised wait event ('' when on CPU); None when it can't be seen."""
    for backend_type, _wtype, wevent, _state, _n in activity or ():
        if backend_type == "checkpointer":
            return normalise_wait(wevent) or ""
    return None


def checkpointer_busy(activity: list | None) -> bool | None:
    """True/False from the checkpointer's wait event; None when it can't be seen (no pg_monitor)."""
    wait = checkpointer_wait(activity)
    return None if wait is None else wait not in _CKPT_IDLE


# Wait event types a release renamed: the old name -> the current one, so a colour or a grouping keyed
# on the current name holds for every server (19 renamed BufferPin to Buffer). Data, not a version test.
WAIT_TYPE_RENAMED = {"BufferPin": "Buffer"}


def wait_type_key(wait_type: str | None) -> str | None:
    """A wait event type under its current name (WAIT_TYPE_RENAMED)."""
    return WAIT_TYPE_RENAMED.get(wait_type, wait_type) if wait_type else wait_type


# 18's asynchronous I/O wait events (pg_wait_events: type, name), named as AIO's wherever waits are shown.
AIO_WAITS = frozenset({
    ("IO", "AioIoCompletion"), ("IO", "AioIoUringSubmit"), ("IO", "AioIoUringExecution"),
    ("LWLock", "AioWorkerSubmissionQueue"), ("LWLock", "AioUringCompletion"),
})


def is_aio_wait(wait_type: str | None, event: str | None) -> bool:
    return (wait_type, event) in AIO_WAITS


def wait_name(wait_type: str | None, event: str | None) -> str:
    """How a wait event is written wherever waits are shown: type:event, AIO's marked as such."""
    name = f"{wait_type or 'CPU'}:{event or 'Running'}"
    return f"AIO {name}" if is_aio_wait(wait_type, event) else name
