"""Deterministic synthetic Frames and recordings, for tests, TUI snapshots and bench/recording_size.py.

`synthetic_frames()` yields Frames that look like a pgbench run on a 4-device machine: noisy rates,
a checkpoint every CHECKPOINT_EVERY ticks, a few waits, and (with `incidents=True`) one of each
event a real session has: a gap, a late tick, a setting change, an annotation. Same arguments, same
Frames, on every machine. `write_fixture()` records them to a file with fixed metadata.

tests/data/recordings/fixture-v<N>.sqlite are frozen samples written by write_fixture() at schema N:
never regenerate one for a later schema, add a new file instead.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

from pgio_tui.frame import BACKEND_LABELS, BACKEND_RATES, IO_OPS, SOURCE_FIELDS, STATEMENT_FIELDS, Event, Frame
from pgio_tui.metrics import CATALOG
from pgio_tui.store.writer import Recorder

START_T = 1_700_000_000.0  # 2023-11-14T22:13:20Z
DEVICES = {"nvme0n1": "data", "nvme1n1": "wal", "sda": None, "dm-0": "tblspc"}
# pg_stat_io activity per backend type: (share of ticks it does any I/O, field -> mean per second);
# fields not listed stay 0, as in a real pg_stat_io (the checkpointer never reads, ...).
SOURCE_PROFILE = {
    "client backend": (1.0, {"reads": 850, "writes": 120, "extends": 40, "hits": 95000, "evictions": 900,
                             "writebacks": 10}),
    "checkpointer": (1.0, {"writes": 410, "writebacks": 400, "fsyncs": 2}),  # while a checkpoint runs
    "background writer": (0.7, {"writes": 35, "writebacks": 30}),
    "autovacuum worker": (0.3, {"reads": 60, "writes": 3, "hits": 2400, "evictions": 60}),
    "autovacuum launcher": (0.05, {"hits": 4}),
    "walsender": (1.0, {"reads": 1, "hits": 30}),
    "background worker": (0.1, {"reads": 25, "hits": 1800, "evictions": 20}),
    "walwriter": (1.0, {"writes": 300, "fsyncs": 80}),
}
BACKEND_TYPES = tuple(SOURCE_PROFILE)
WAITS = (
    ("client backend", "IO", "DataFileRead"),
    ("client backend", "IO", "WALSync"),
    ("client backend", "LWLock", "WALWrite"),
    ("client backend", "Lock", "transactionid"),
    ("checkpointer", "Timeout", "CheckpointWriteDelay"),
    ("autovacuum worker", "IO", "DataFileWrite"),
)
# Top statements: every STATEMENT_EVERY ticks, STATEMENT_COUNT statements (pgbench's five and a
# tail of others), with texts that include what a hostile server could send (markup, control bytes).
STATEMENT_EVERY = 10
STATEMENT_COUNT = 20
STATEMENT_TEXTS = (
    "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
    "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
    "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
    "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
    "SELECT [bold red]not markup[/] FROM t WHERE x = $1 \x1b[31m",
)
CHECKPOINT_EVERY = 30  # ticks from one checkpoint start to the next
CHECKPOINT_LENGTH = 20  # ticks a checkpoint runs
GAP_AT = 40  # with incidents: ticks GAP_AT, GAP_AT+1 are missing
SETTINGS = (
    ("shared_buffers", "16384", "8kB", "postgres"),
    ("checkpoint_timeout", "300", "s", "postgres"),
    ("max_wal_size", "1024", "MB", "postgres"),
    ("backend_flush_after", "0", "8kB", "postgres"),
    ("vm.dirty_background_ratio", "10", None, "kernel"),
    ("vm.dirty_ratio", "20", None, "kernel"),
    ("nvme0n1.scheduler", "none", None, "device"),
    ("cpu.count", "8", "", "kernel"),  # as Sampler.settings_rows writes kernel_settings()
    ("mem.total_kb", "16318464", "", "kernel"),
)
META = {
    "host": "fixture-host",
    "os": "Linux-6.1-x86_64 (fixture)",
    "created_at": "2023-11-14T23:13:20+01:00",
    "command_line": "pgio-tui record -o fixture.sqlite",
    "server_version": "17.2",
    "server_version_num": 170002,
    "conninfo": "host=/tmp port=5432 user=postgres dbname=bench",
    "features": {"pg_stat_io": True, "pg_stat_checkpointer": True, "pg_stat_statements": False},  # Sampler.meta()
}


def _values(rng: random.Random, tick: int, dt: float, cp_tick: int | None) -> dict:
    def rate(mean: float, spread: float = 0.2) -> float:
        return max(0, round(rng.gauss(mean, mean * spread))) / dt

    def ms(mean: float) -> float:
        return abs(rng.gauss(mean, mean * 0.3))

    active = cp_tick is not None
    wave = 1 + 0.3 * math.sin(tick / 17)
    lat = [ms(2.5 * wave) for _ in range(7)]
    lat.sort()
    v = {
        "checkpoint.active": int(active),
        "checkpoint.kind": "time",
        "checkpoint.progress": cp_tick / CHECKPOINT_LENGTH if active else None,
        "checkpoint.buffers_written": cp_tick * 412 + rng.randrange(400) if active else None,
        "checkpoint.buffers_estimate": 8300 if active else None,
        "checkpoint.elapsed_s": cp_tick * dt if active else None,
        "checkpoint.time_progress": (tick % CHECKPOINT_EVERY) / CHECKPOINT_EVERY + rng.random() * 1e-3,
        "checkpoint.wal_progress": (tick % CHECKPOINT_EVERY) / 80 + rng.random() * 1e-3,
        "checkpoint.timeout_s": 300.0,
        "checkpoint.completion_target": 0.9,
        "writes.checkpointer": rate(410) if active else 0.0,
        "writes.bgwriter": rate(35),
        "writes.backend": rate(120 * wave),
        "writes.autovacuum": rate(3, 1),
        "writes.other": rate(0.5, 1),
        "fsyncs.backend": 0.0,
        "fsyncs.checkpointer": rate(2, 1) if active else 0.0,
        "extends.backend": rate(40),
        "writebacks.total": rate(12),
        "bgwriter.maxwritten_s": rate(0.3, 1),
        "buffers.alloc_s": rate(900 * wave),
        "mem.dirty_kb": 180_000 + rng.randrange(90_000) * 4,
        "mem.writeback_kb": rng.randrange(20_000) * 4,
        "mem.dirty_background_threshold_kb": 1_572_864,
        "mem.dirty_threshold_kb": 3_145_728,
        "mem.available_kb": 9_000_000 + rng.randrange(10_000) * 4,
        "mem.cached_kb": 6_000_000 + rng.randrange(10_000) * 4,
        "io.pressure_some_pct": abs(rng.gauss(8, 4)),
        "io.pressure_full_pct": abs(rng.gauss(3, 2)),
        "latency.tps": rate(3200 * wave, 0.05),
        "latency.mean_ms": sum(lat) / 7,
        "latency.stddev_ms": ms(1.1),
        "latency.p50_ms": lat[3],
        "latency.p95_ms": lat[5] * 2,
        "latency.p99_ms": lat[6] * 3,
        "latency.max_ms": lat[6] * 9,
        "statements.calls_s": rate(22000 * wave, 0.05),  # pg_stat_statements alongside (no extra draw)
        "statements.mean_ms": sum(lat) / 7 * 0.3,
        "statements.stddev_ms": lat[3] * 0.4,
        "latency.txns": round(3200 * wave * dt),  # a launched pgbench's per-tick figures (issue 4)
        "latency.failed": 0,
        **{f"latency.over_{n}ms": (rng.randrange(3) if n == 100 else 0) for n in (100, 200, 300, 400, 500)},
        **{f"statements.log_over_{n}ms": None for n in (100, 200, 300, 400, 500)},  # no server log here
        "pgio.reads_s": None,  # only while a pgio workload runs
        "pgio.hits_s": None,
        "pgio.tuples_s": None,
        "db.blks_read_s": rate(850 * wave),
        "db.blks_hit_s": rate(95000 * wave, 0.05),
        "db.xact_s": rate(3200 * wave, 0.05),
        "db.temp_bytes_s": 0.0,
        "db.blk_read_time_ms_s": ms(45),
        "db.blk_write_time_ms_s": ms(12),
        "db.backends": 34 + rng.randrange(3),
        "wal.bytes_s": rate(9_800_000 * wave, 0.1),
        "wal.records_s": rate(21000 * wave, 0.05),
        "wal.fpi_s": rate(1300 * wave),
        "wal.fpi_bytes_s": None,  # pg_stat_wal.wal_fpi_bytes is 19's: this fixture's server is older
        "wal.buffers_full_s": rate(0.2, 1),
        "sessions.active": rng.randrange(8, 32),
        "sessions.io_wait": rng.randrange(0, 6),
        "sessions.lock_wait": rng.randrange(0, 3),
        "observer.collect_ms": ms(3.1),
        "observer.cpu_ms": 10.0 * rng.randrange(3),  # os.times() counts 10 ms clock ticks
        "observer.server_ms": ms(0.8),
        "observer.late_ms": ms(0.2),
        "observer.statements_ms": None,  # set by _statements (own random stream)
        "statements.window_s": None,
        "aio.in_flight": None,  # 18+ (set by _aio)
        "buffers.evictions_s": None,  # 16+: the sum of the io rows' evictions (set with them)
        **_wal_and_buffers(random.Random(tick * 7919 + 13), tick, dt, active),
    }
    assert set(v) == {m.name for m in CATALOG}, "fixture must carry the full catalog"
    return v


def _wal_and_buffers(rng: random.Random, tick: int, dt: float, checkpointing: bool) -> dict:
    """WAL I/O and shared-buffer figures, from their own stream (so older figures stay as they were):
    a walwriter-and-commit-flush pattern, buffers read every 10 ticks."""
    syncs = max(0, round(rng.gauss(1900, 150)))
    read_now = tick % 10 == 0
    return {
        "wal.writes_s": (syncs + round(rng.uniform(0, 40))) / dt,
        "wal.syncs_s": syncs / dt,
        "wal.write_time_ms_s": round(syncs * rng.uniform(0.01, 0.03)) / dt,
        "wal.sync_time_ms_s": round(syncs * rng.uniform(0.35, 0.5)) / dt,
        "buffers.used": 16384 if read_now else None,
        "buffers.dirty": (9000 if checkpointing else 4000) + rng.randrange(800) if read_now else None,
    }


def _device(rng: random.Random, role: str | None, dt: float, checkpointing: bool, frng: random.Random) -> dict:
    busy = {"data": 1.0, "wal": 0.8, "tblspc": 0.3}.get(role, 0.1) * (1.6 if checkpointing else 1)
    reads = role != "wal" or rng.random() < 0.05  # WAL is written, read only by archiving/replicas
    r = max(0, round(rng.gauss(850 * busy, 120))) / dt if reads else 0.0
    w = max(0, round(rng.gauss(1200 * busy, 200))) / dt
    # Flushes (own stream): the WAL device takes the commits' fsyncs, the data device the checkpoint's.
    mean = {"wal": 1900, "data": 40 if checkpointing else 2}.get(role)
    flushes = max(0, round(frng.gauss(mean, mean ** 0.5))) if mean else 0
    return {
        "r_s": r, "w_s": w, "rkb_s": r * 8, "wkb_s": w * rng.uniform(8, 24),
        "r_await_ms": abs(rng.gauss(0.12, 0.04)) if r else 0.0, "w_await_ms": abs(rng.gauss(0.6 * busy, 0.3)),
        "aqu_sz": abs(rng.gauss(1.4 * busy, 0.5)), "util_pct": min(100.0, abs(rng.gauss(55 * busy, 10))),
        "f_s": flushes / dt, "f_await_ms": round(flushes * frng.uniform(0.3, 0.5)) / flushes if flushes else 0.0,
    }


def _sources(rng: random.Random, dt: float, checkpointing: bool) -> dict:
    out = {}
    for bt, (share, means) in SOURCE_PROFILE.items():
        idle = rng.random() >= share or (bt == "checkpointer" and not checkpointing)
        out[bt] = {f: 0.0 if idle or f not in means else max(0, round(rng.gauss(means[f], means[f] * 0.2))) / dt
                   for f in SOURCE_FIELDS}
    return out


def _io_rows(rng: random.Random, sources: dict, dt: float) -> dict:
    """Frame.io whose relation rows add up to the tick's sources (a recording makes those from
    them), on their own random stream so other figures stay as they were: autovacuum in context
    vacuum, the rest normal, a client backend's bulkread ring taking part of its reads on a fifth of
    the ticks, the backends' WAL; 18's kB (scans and vacuum combine 1-4 blocks a read) and times, to 3
    decimals of ms/s."""
    def ms(n: float, lo: float, hi: float) -> float:
        return round(n * dt * rng.uniform(lo, hi), 3) / dt

    def row(ops: dict, combine: float = 1.0) -> dict:
        r, w, e = ops["reads"], ops["writes"], ops["extends"]
        return {**{f: ops.get(f, 0.0) for f in IO_OPS}, "read_kb": round(r * dt * combine) * 8 / dt,
                "write_kb": w * 8, "extend_kb": e * 8, "read_ms": ms(r, 0.05, 0.2), "write_ms": ms(w, 0.01, 0.05),
                "writeback_ms": ms(ops["writebacks"], 0.005, 0.02), "extend_ms": ms(e, 0.01, 0.03),
                "fsync_ms": ms(ops["fsyncs"], 0.3, 5)}

    out: dict = {}
    for bt, ops in sources.items():  # a row stays once it has been seen, idle or not (as pg_stat_io's)
        ops = {**ops, "reuses": 0.0}
        if bt == "client backend" and rng.random() < 0.2:  # a sequential scan through the bulkread ring
            bulk = min(ops["reads"], round(rng.gauss(300, 30)) / dt)
            ops["reads"] -= bulk
            out[(bt, "relation", "bulkread")] = row({**dict.fromkeys(SOURCE_FIELDS, 0.0), "reads": bulk,
                                                     "reuses": max(0.0, bulk - 20 / dt)}, rng.uniform(2, 4))
        vacuum = bt == "autovacuum worker"  # vacuum reads ahead (combines); index lookups read single blocks
        out[(bt, "relation", "vacuum" if vacuum else "normal")] = row(ops, rng.uniform(1, 4) if vacuum else 1.0)
    if sources.get("client backend"):  # 18: the backends' WAL writes and flushes (commits)
        n = round(rng.gauss(1900, 150))
        wal = row({**dict.fromkeys(SOURCE_FIELDS, 0.0), "writes": n / dt, "fsyncs": n / dt, "reuses": 0.0})
        out[("client backend", "wal", "normal")] = {**wal, "fsync_ms": ms(n / dt, 0.35, 0.5)}  # as wal.sync_time
    return out


def statement_text(k: int) -> str:
    return STATEMENT_TEXTS[k] if k < len(STATEMENT_TEXTS) else f"SELECT * FROM report_{k} WHERE day = $1"


def _statements(rng: random.Random, f: Frame, window: float) -> None:
    """STATEMENT_COUNT top statements over the window; texts on their first appearance."""
    f.values["statements.window_s"] = window
    f.values["observer.statements_ms"] = abs(rng.gauss(1.5, 0.3))
    for k in range(STATEMENT_COUNT):
        scale = 1.0 / (1 + k)
        calls = max(1, round(rng.gauss(3000 * scale, 300 * scale) * window))
        mean = abs(rng.gauss(0.4 + 0.1 * k, 0.05))
        row = {"queryid": 1000 + k, "calls_s": calls / window, "time_ms_s": round(calls * mean * 1000) / 1000 / window,
               "mean_ms": round(calls * mean * 1000) / 1000 / calls, "stddev_ms": round(mean * 0.6, 3),
               "rows_s": calls / window}
        for fld in ("hit_s", "read_s", "dirtied_s", "written_s", "temp_written_s", "wal_bytes_s"):
            base = {"hit_s": 4, "read_s": 1, "dirtied_s": 0.5, "written_s": 0.05, "temp_written_s": 0,
                    "wal_bytes_s": 120}[fld]
            row[fld] = round(calls * base * rng.uniform(0.5, 1.5)) / window
        row["read_time_ms_s"] = round(row["read_s"] * window * 80) / 1000 / window  # 80 us per read
        row["write_time_ms_s"] = round(row["written_s"] * window * 120) / 1000 / window
        assert set(row) - {"queryid"} == set(STATEMENT_FIELDS)
        f.statements.append(row)
        if f.tick == STATEMENT_EVERY:
            f.statement_texts[1000 + k] = statement_text(k)


# Backends as the tick sees them (pgbench's clients, the background processes, one client whose
# application_name is what a hostile user could set): (pid, backend_type, application, database).
BACKENDS = (*((4100 + k, "client backend", "pgbench", "bench") for k in range(8)),
            (4200, "client backend", "[red]psql[/]\x1b[2J", "bench"),
            (3001, "checkpointer", "", None), (3002, "background writer", "", None), (3003, "walwriter", "", None),
            (3010, "autovacuum worker", "", "bench"))
IO_WORKERS = (3020, 3021, 3022)  # 18: io_method = worker
BACKEND_WAITS = (("active", "IO", "DataFileRead"), ("active", "LWLock", "WALWrite"), ("active", None, None),
                 ("idle in transaction", "Client", "ClientRead"), ("active", "IO", "WALSync"))


def _backends(rng: random.Random, f: Frame, dt: float, checkpointing: bool, major: int) -> None:
    """The tick's backends, sorted by I/O as the sampler sorts them (pg_* figures on 18 only)."""
    rows = []
    procs = BACKENDS + tuple((pid, "io worker", "", None) for pid in IO_WORKERS) if major >= 18 else BACKENDS
    for pid, bt, app, db in procs:
        client = bt == "client backend"
        busy = {"checkpointer": checkpointing, "autovacuum worker": rng.random() < 0.3,
                "io worker": rng.random() < 0.6}.get(bt, True)
        read = round(rng.gauss(600_000, 200_000)) if busy and (client or bt in ("autovacuum worker", "io worker")) else 0
        write = {"client backend": 900_000, "checkpointer": 3_300_000, "background writer": 280_000,
                 "walwriter": 2_400_000, "autovacuum worker": 120_000, "io worker": 0}[bt] if busy else 0
        write = max(0, round(rng.gauss(write, write * 0.2) / 4096)) * 4096
        b = dict(zip(BACKEND_LABELS, (bt, app, db, None, "Activity", None)))
        b.update(pid=pid, query_start=None, query_id=None)
        if client:
            state, wtype, wevent = BACKEND_WAITS[rng.randrange(len(BACKEND_WAITS))]
            b.update(state=state, wait_event_type=wtype, wait_event=wevent, query_start=f.t - rng.uniform(0, 0.05),
                     query_id=1000 + rng.randrange(5) if app == "pgbench" else None)
        else:
            b["wait_event"] = {"checkpointer": "CheckpointWriteDelay" if checkpointing else "CheckpointerMain",
                               "background writer": "BgwriterMain", "walwriter": "WalWriterMain",
                               "autovacuum worker": None, "io worker": "IoWorkerMain"}[bt]
            if bt == "checkpointer" and checkpointing:
                b["wait_event_type"] = "Timeout"
            if bt == "autovacuum worker":
                b.update(state="active", wait_event_type=None, query_start=f.t - 12.5)
        b["read_bytes_s"], b["write_bytes_s"] = max(0, read) / dt, write / dt
        b["pg_read_bytes_s"] = b["pg_write_bytes_s"] = None
        if major >= 18 and bt != "checkpointer":
            b["pg_read_bytes_s"] = round(b["read_bytes_s"] * dt * 1.4 / 8192) * 8192 / dt
            b["pg_write_bytes_s"] = round(b["write_bytes_s"] * dt * 0.9 / 8192) * 8192 / dt
        assert set(BACKEND_RATES) <= set(b)
        rows.append(b)
    f.backends = sorted(rows, key=lambda b: -(b["read_bytes_s"] + b["write_bytes_s"]))


AIO_STATES = ("SUBMITTED", "COMPLETED_IO", "STAGED", "DEFINED")


def _aio(rng: random.Random, f: Frame) -> None:
    """18: asynchronous I/O handles in use by state and operation."""
    f.aio = [(st, op, n) for st in AIO_STATES for op in ("readv", "writev")
             if (n := max(0, round(rng.gauss({"readv": 6, "writev": 1}[op] * (3 if st == "SUBMITTED" else 1), 2))))]
    f.values["aio.in_flight"] = sum(n for _, _, n in f.aio)


def synthetic_frames(n: int = 60, *, interval: float = 1.0, seed: int = 0, start_t: float = START_T,
                     devices: dict[str, str | None] | None = None, incidents: bool = True,
                     major: int = 17) -> Iterator[Frame]:
    """n ticks (fewer Frames when `incidents` makes a gap) of a busy, checkpointing server
    (`major` 18: backends' pg_stat_get_backend_io figures, io workers and pg_aios too)."""
    rng = random.Random(seed)
    srng = random.Random(seed + 7919)  # statements: their own stream, so other figures stay as they were
    brng = random.Random(seed + 104729)  # backends and AIO: theirs
    devices = DEVICES if devices is None else devices
    cp_id = 0
    for tick in range(n):
        if incidents and tick in (GAP_AT, GAP_AT + 1):
            continue
        first = tick == 0
        dt = None if first else interval * (1 + rng.gauss(0, 0.002))
        if incidents and tick == GAP_AT + 2:
            dt = 3 * interval
        cp_tick = (tick - 5) % CHECKPOINT_EVERY if tick >= 5 else None
        if cp_tick is not None and cp_tick >= CHECKPOINT_LENGTH:
            cp_tick = None
        rate_dt = dt or interval
        f = Frame(tick=tick, t=start_t + tick * interval + rng.uniform(0, 0.004),
                  elapsed=tick * interval + rng.uniform(0, 0.004), dt=dt)
        f.values = _values(rng, tick, rate_dt, cp_tick)
        if not first:
            frng = random.Random(tick * 104729 + 17)
            f.devices = {d: _device(rng, role, rate_dt, cp_tick is not None, frng) for d, role in devices.items()}
            f.sources = _sources(rng, rate_dt, cp_tick is not None)
            f.io = _io_rows(random.Random(tick * 104729 + 7), f.sources, rate_dt)
            f.values["buffers.evictions_s"] = sum(row["evictions"] for row in f.sources.values())
        f.device_roles = {d: role for d, role in devices.items() if role}
        f.waits = [(bt, typ, ev, rng.randrange(1, 6)) for bt, typ, ev in WAITS if rng.random() < 0.6]
        if tick and tick % STATEMENT_EVERY == 0:
            _statements(srng, f, STATEMENT_EVERY * interval)
        if not first:
            _backends(brng, f, rate_dt, cp_tick is not None, major)
            if major >= 18:
                _aio(brng, f)
                f.waits.append(("client backend", "IO", "AioIoCompletion", brng.randrange(2, 9)))
        if cp_tick == 0:
            f.events.append(Event("checkpoint_start", "checkpoint starting: time", {"kind": "time"}))
        if cp_tick == CHECKPOINT_LENGTH - 1:
            cp_id += 1
            start_tick = tick - CHECKPOINT_LENGTH + 1
            f.events.append(Event("checkpoint_end", "checkpoint complete: wrote 8241 buffers (50.3%)"))
            f.checkpoints.append({
                "start_t": start_t + start_tick * interval, "end_t": f.t, "start_tick": start_tick,
                "end_tick": tick, "kind": "time", "buffers": 8241, "write_s": 17.9, "sync_s": 0.4,
                "total_s": 18.5, "distance_kb": 301_234, "estimate_kb": 320_000,
                "lsn": f"0/{cp_id:X}8000028", "redo_lsn": f"0/{cp_id:X}0000060", "source": "log",
                "wal_files_added": 0, "wal_files_recycled": 3,  # unknown keys (test_store: kept in `extra`)
                "log_buffers": 8241, "buffers_pct": 50.3, "wal_added": 0, "wal_removed": 1, "wal_recycled": 3,
                "sync_files": 41, "longest_s": 0.112, "average_s": 0.009,
            })
        if incidents:
            if tick == GAP_AT + 2:
                f.events.append(Event("gap", "2 ticks missed: server unreachable", {"missed": 2}))
            if tick == 12:
                f.events.append(Event("late", "tick 340 ms late", {"late_ms": 340}))
            if tick == 20:
                f.events.append(Event("setting_change", "backend_flush_after: 0 -> 256",
                                      {"name": "backend_flush_after", "old": "0", "new": "256"}))
            if tick == 25:
                f.events.append(Event("annotation", "raised client count to 32"))
        yield f


def write_fixture(path: str | Path, n: int = 60, *, interval: float = 1.0, seed: int = 0,
                  force: bool = False, incidents: bool = True, major: int = 17) -> Path:
    """Record synthetic_frames() to `path` with fixed metadata, settings and a pgbench workload
    (`major` 18: as a PostgreSQL 18 server with io_method = worker would give them)."""
    frames = list(synthetic_frames(n, interval=interval, seed=seed, incidents=incidents, major=major))
    meta = {**META, "interval_s": interval}
    settings = SETTINGS
    if major >= 18:
        meta.update(server_version="18.1", server_version_num=180001,
                    features={**META["features"], "pg_stat_get_backend_io": True, "pg_aios": True})
        settings = SETTINGS + (("io_method", "worker", "", "postgres"), ("io_workers", "3", "", "postgres"))
    with Recorder(path, force=force, meta=meta) as rec:
        rec.set_settings(settings)
        wid = rec.workload_start("pgbench", ["pgbench", "-c", "8", "-T", str(int(n * interval)), "bench"],
                                 {"clients": 8}, t=START_T)
        for f in frames:
            rec.write(f)
            if f.tick == 20 and incidents:
                rec.set_settings([("backend_flush_after", "256", "8kB", "postgres")], tick=20)
            if f.tick % 10 == 5:
                rec.workload_output(wid, "stderr", f"progress: {f.tick:.1f} s, 3187.4 tps, lat 2.507 ms stddev 1.102",
                                    t=f.t)
        rec.workload_stop(wid, 0, {"tps": 3187.4}, t=frames[-1].t)
        rec.close("fixture done", t=frames[-1].t + 0.5)
    return Path(path)
