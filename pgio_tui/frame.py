"""One tick of everything the tool knows: the unit that flows from sources to recorder and views.

Nothing downstream of a Frame knows whether it came from a live server or a recording, so replay is
just another source. Values are already rates (per second) or gauges: the sampler converts counters
once, and no consumer ever does it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Value = float | int | str | None

# Per-device figures, named as in iostat -x (see metrics.py for units).
DEVICE_FIELDS = ("r_s", "w_s", "rkb_s", "wkb_s", "r_await_ms", "w_await_ms", "aqu_sz", "util_pct", "f_s",
                 "f_await_ms")
DISK_PREFIX = "disk."  # a device's metrics are disk.<device>.<field>
# Seconds between ticks: the limits of --interval (the command line checks them without importing
# the sampler, which imports psycopg).
MIN_INTERVAL, MAX_INTERVAL = 0.1, 60.0


def disk(device: str, fld: str) -> str:
    """The public name of one device's field: disk("sda", "util_pct") -> "disk.sda.util_pct"."""
    return f"{DISK_PREFIX}{device}.{fld}"

# Per-source (pg_stat_io backend_type) figures, all per second.
SOURCE_FIELDS = ("reads", "writes", "extends", "fsyncs", "writebacks", "hits", "evictions")
# Per pg_stat_io row (backend_type, object, context), 16+: every operation's count, its kB and its
# time, all per second (see metrics.IO_METRICS). The *_ms fields are None when the timing setting was
# off (unknown, not 0); ms per operation is time / count (ratios.per_op_ms).
IO_OPS = ("reads", "writes", "writebacks", "extends", "fsyncs", "hits", "evictions", "reuses")
IO_BYTES = ("read_kb", "write_kb", "extend_kb")
IO_BYTES_OPS = {"read_kb": "reads", "write_kb": "writes", "extend_kb": "extends"}  # each kB field's operations
BLOCK_KB = 8  # one block in kB (BLCKSZ, 16-17's op_bytes): an operation moves one or more (18 combines reads)
TIMED_OPS = ("read", "write", "writeback", "extend", "fsync")  # <op>_ms is the time of <op>s
IO_TIMES = tuple(f"{op}_ms" for op in TIMED_OPS)
IO_FIELDS = IO_OPS + IO_BYTES + IO_TIMES
IoKey = tuple[str, str, str]  # (backend_type, object, context) as pg_stat_io names them


def relation_sums(io: dict[IoKey, dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """Frame.sources from Frame.io: each backend type's object relation rows summed over contexts
    (SOURCE_FIELDS; None when a part is unknown)."""
    out: dict[str, dict[str, float | None]] = {}
    for (bt, obj, _ctx), row in io.items():
        if obj != "relation":
            continue
        acc = out.get(bt)
        if acc is None:
            out[bt] = {f: row.get(f) for f in SOURCE_FIELDS}
            continue
        for f in SOURCE_FIELDS:
            a, v = acc[f], row.get(f)
            acc[f] = None if a is None or v is None else a + v
    return out


# Per-statement (pg_stat_statements queryid) figures over the statement window: rates per second
# except mean_ms and stddev_ms (see metrics.STATEMENT_METRICS for units and sources).
STATEMENT_FIELDS = ("calls_s", "time_ms_s", "mean_ms", "stddev_ms", "rows_s", "hit_s", "read_s",
                    "dirtied_s", "written_s", "read_time_ms_s", "write_time_ms_s", "temp_written_s",
                    "wal_bytes_s")

# Per-backend (pg_stat_activity pid) figures, all bytes per second: read_bytes_s / write_bytes_s
# from /proc/<pid>/io (on the database host), pg_read_bytes_s / pg_write_bytes_s from
# pg_stat_get_backend_io(pid) (18+). See sources/backends.py and metrics.BACKEND_METRICS.
BACKEND_RATES = ("read_bytes_s", "write_bytes_s", "pg_read_bytes_s", "pg_write_bytes_s")
# ... and what the backend is (text from the server: untrusted, shown as plain text).
BACKEND_LABELS = ("backend_type", "application", "database", "state", "wait_event_type", "wait_event")
BACKENDS_TOP = 3  # backends a recording keeps per tick: those with any I/O, most first (file size)


@dataclass(slots=True)
class Event:
    """Something that happened at a tick: checkpoint start/end, gap, reconnect, setting change, ...

    `kind` is a short machine name (see EVENT_KINDS); `text` is what a person reads.
    """

    kind: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


EVENT_KINDS = (
    "start",  # recording started
    "stop",  # recording stopped (with reason)
    "checkpoint_start",
    "checkpoint_end",
    "gap",  # ticks missed: server unreachable, machine suspended, sampler too slow
    "late",  # a tick ran late (recorded, not dropped)
    "reconnect",
    "server_restart",
    "stats_reset",  # a counter went backwards or stats_reset changed: that tick's rate is unknown
    "setting_change",
    "annotation",
    "workload_start",
    "workload_stop",
    "autovacuum",  # an autovacuum worker began a table: its query as the server wrote it (anti-wraparound said)
    "note",  # degraded metric, missing privilege, ...
    "error",
)


@dataclass(slots=True)
class Frame:
    """One tick of everything: what the sampler derives, the TUI draws, the recorder stores and replay reads back."""

    tick: int  # 0, 1, 2 ... in schedule order; a gap skips numbers
    t: float  # wall clock, Unix epoch seconds, when the sample was taken
    elapsed: float  # seconds since the recording/session started (monotonic clock)
    dt: float | None  # seconds since the previous sample; None for the first (no rates yet)
    values: dict[str, Value] = field(default_factory=dict)  # scalar metrics by catalog name
    devices: dict[str, dict[str, float | None]] = field(default_factory=dict)  # device -> DEVICE_FIELDS
    device_roles: dict[str, str] = field(default_factory=dict)  # device -> "data", "wal", "data,wal", "tblspc"
    sources: dict[str, dict[str, float | None]] = field(default_factory=dict)  # backend_type -> SOURCE_FIELDS
    io: dict[IoKey, dict[str, float | None]] = field(default_factory=dict)  # pg_stat_io row -> IO_FIELDS (16+)
    waits: list[tuple[str, str, str, int]] = field(default_factory=list)  # (backend_type, type, event, count)
    events: list[Event] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)  # checkpoints that finished at this tick
    # Top statements over the window ending at this tick (only on ticks that read them: see
    # values["statements.window_s"]): {"queryid": int, **STATEMENT_FIELDS}.
    statements: list[dict[str, Any]] = field(default_factory=list)
    statement_texts: dict[int, str] = field(default_factory=dict)  # query text first learned at this tick
    # A launched workload's latencies of this tick as sparse histogram buckets (pgio_tui.quantiles):
    # bucket -> transactions (pgio: statements), so any window's percentiles come from transactions.
    latency_buckets: dict[int, int] = field(default_factory=dict)
    # Backends sorted by I/O, most first: {"pid", "query_start" (epoch s), "query_id", **BACKEND_LABELS,
    # **BACKEND_RATES}. Live: every process the tick saw; a recording keeps the top few with I/O.
    backends: list[dict[str, Any]] = field(default_factory=list)
    # Asynchronous I/O handles in use (pg_aios, 18+): (state, operation, count).
    aio: list[tuple[str, str, int]] = field(default_factory=list)
    # Not a field: a replayed Frame may decode its io, sources, statements and backends when first read
    # (store/rebuild.py's DeferredFrame); FrameHistory then keeps them undecoded until asked for.
    deferred = False

    def may_hold(self, group: str) -> bool:
        """Whether the tick may have statements ("statements") or backends or AIO rows ("backends"):
        here whether it has; a deferred Frame answers from its stored rows, which may decode to none."""
        return bool(self.statements) if group == "statements" else bool(self.backends or self.aio)

    def get(self, name: str, default: Value = None) -> Value:
        """A metric by its public name, including `disk.<device>.<field>`."""
        if name in self.values:
            return self.values[name]
        if name.startswith(DISK_PREFIX):
            dev, _, fld = name[len(DISK_PREFIX):].rpartition(".")
            return self.devices.get(dev, {}).get(fld, default)
        return default

    def number(self, name: str) -> float | None:
        """A numeric metric (get()); None when absent or, for a text metric, not a number."""
        v = self.get(name)
        return None if isinstance(v, str) else v

    def flat(self) -> dict[str, Value]:
        """All metrics as one dict of public names: what `export` writes as one row."""
        out: dict[str, Value] = dict(self.values)
        for dev, row in self.devices.items():
            for fld, v in row.items():
                out[disk(dev, fld)] = v
        return out
