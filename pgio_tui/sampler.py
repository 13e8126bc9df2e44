"""The tick loop: owns the clock, asks every source once per tick, and turns counters into rates.

Ticks follow a fixed schedule (start + k * interval), so there is no drift. A late tick is
recorded with how late it was; ticks that could not run at all (the machine was suspended, the
sampler stalled) are skipped numbers plus a `gap` event, never silently dropped. Counters become
per-second rates here and nowhere else; a counter that goes backwards (stats reset, server
restart) gives no rate for that tick and an event instead of a nonsense spike.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Callable

from pgio_tui import __version__
from pgio_tui import metrics as M
from pgio_tui.frame import SOURCE_FIELDS, Event, Frame
from pgio_tui.publication import Spreader
from pgio_tui.sources import disks, kernel, logaccess, pgfeatures, procfs
from pgio_tui.sources.checkpoint import CheckpointSettings, CheckpointTracker, TickInput
from pgio_tui.sources.postgres import PendingConnect, PostgresSource, SourceError
from pgio_tui.sources.procfs import LocalProc, RemoteProc
from pgio_tui.sources.statements import ROWS, StatementSchedule, StatementTracker

MIN_INTERVAL, MAX_INTERVAL = 0.1, 60.0
RECONNECT_BACKOFF = (1, 2, 4, 8, 15)  # seconds between reconnect attempts while the server is away


# Cumulative counters that become per-second rates: (metric, section of the raw sample, column).
COUNTER_RATES = (
    (M.BGWRITER_MAXWRITTEN_S, "bgwriter", "maxwritten_clean"),
    (M.BUFFERS_ALLOC_S, "bgwriter", "buffers_alloc"),
    (M.DB_BLKS_READ_S, "db", "blks_read"),
    (M.DB_BLKS_HIT_S, "db", "blks_hit"),
    (M.DB_XACT_S, "db", "xact"),
    (M.DB_TEMP_BYTES_S, "db", "temp_bytes"),
    (M.DB_BLK_READ_TIME_MS_S, "db", "blk_read_time"),
    (M.DB_BLK_WRITE_TIME_MS_S, "db", "blk_write_time"),
    (M.WAL_RECORDS_S, "wal", "wal_records"),
    (M.WAL_FPI_S, "wal", "wal_fpi"),
    (M.WAL_BUFFERS_FULL_S, "wal", "wal_buffers_full"),
    (M.WAL_WRITES_S, "wal", "wal_write"),
    (M.WAL_SYNCS_S, "wal", "wal_sync"),
    (M.WAL_WRITE_TIME_MS_S, "wal", "wal_write_time"),
    (M.WAL_SYNC_TIME_MS_S, "wal", "wal_sync_time"),
)
BUFCACHE_EVERY_S = 10.0  # pg_buffercache_summary() visits every buffer header: read it this often


class UnknownDevices(SourceError):
    """--devices named a device the database host does not have."""


def rate(cur, prev, dt) -> float | None:
    """Per-second rate of a cumulative counter; None when unknown or the counter went backwards."""
    if cur is None or prev is None or not dt:
        return None
    delta = float(cur) - float(prev)
    return delta / dt if delta >= 0 else None


class Sampler:
    def __init__(self, conninfo: str, interval: float = 1.0, devices: list[str] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
            raise ValueError(f"--interval must be between {MIN_INTERVAL} and {MAX_INTERVAL} seconds")
        self.interval = interval
        self.pg = PostgresSource(conninfo)
        self.clock = clock
        self.wanted_devices = devices
        self.settings: dict[str, str] = {}  # name -> value in pg_settings' base unit
        self.setting_units: dict[str, str] = {}  # name -> that unit ('8kB', 's', 'MB', ...)
        self.os_mode = "none"  # local | remote | none: where /proc comes from
        self.device_roles: dict[str, str] = {}
        self.tracker: CheckpointTracker | None = None
        self.checkpoint_log = logaccess.CheckpointLog()  # whose server log lines count
        self.spreader = Spreader()  # counters published in bursts, paid out evenly
        self._final = False  # this tick is the session's last
        self.kernel: kernel.KernelSource | None = None
        self.disks: disks.DiskSource | None = None
        self._prev_raw: pgfeatures.RawSample | None = None
        self._prev_mono: float | None = None
        self._prev_cpu: float | None = None
        self._settings_md5: str | None = None
        self._postmaster_start: float | None = None
        self._pending: list[Event] = []
        self._next_reconnect = 0.0
        self._connecting: PendingConnect | None = None
        self._reconnect_try = 0
        self._down_since_tick: int | None = None
        self.statement_schedule = StatementSchedule(interval)
        self.statements = StatementTracker()
        self._bufcache_next = 0.0  # clock time from which the next tick reads pg_buffercache_summary()
        self._stmt_kind = 0  # what this tick reads of pg_stat_statements
        self._stmt_texts: list[int] = []  # queryids whose text this tick asks for
        self._texts_sent: set[int] = set()  # queryids whose text went out in a frame
        self._prev_sums: tuple[dict, float] | None = None  # last statement sums and the server time
        self._prev_rows_t: float | None = None  # server time of the last read of every entry
        # Extra per-tick sources (a launched workload): objects with sample(frame) that add values
        # and events to the frame. They may be added and removed between ticks.
        self.tick_sources: list = []

    # -- set-up -----------------------------------------------------------------------------
    def open(self) -> None:
        """Connect and look around. Raises SourceError (one line) when the server can't be read."""
        features = self.pg.open()
        self.statement_schedule.enabled = features.pgss_schema is not None
        self._load_settings()
        self._setup_os()
        if not features.logfile and self.os_mode == "local":
            logaccess.find_local_log(self.pg, self.settings)
        self.tracker = CheckpointTracker(CheckpointSettings.from_settings(self.settings), self._log_trusted())
        for note in features.notes:
            self._pending.append(Event("note", note))

    def _log_trusted(self) -> bool:
        """Can checkpoint lines in the server log be told from forgeries? If not, say why (a note)."""
        self.checkpoint_log, why = logaccess.checkpoint_log(self.pg, self.settings, self.os_mode == "local")
        if why is not None:
            self.pg.features.notes.append(why)
        return self.checkpoint_log.trusted

    def _load_settings(self) -> list[tuple[str, str, str, str]]:
        rows = self.pg.settings()
        self.settings = {name: value for name, value, _unit, _ctx in rows}
        self.setting_units = {name: unit for name, _value, unit, _ctx in rows}
        return rows

    def _setup_os(self) -> None:
        """OS figures only from the database host: locally, or the server's /proc through SQL."""
        datadir = self.pg.features.data_directory
        reader = None
        if procfs.same_cluster_locally(datadir, self.pg):
            reader, self.os_mode = LocalProc(), "local"
        elif RemoteProc.available(self.pg.conn):
            reader, self.os_mode = RemoteProc(self.pg.conn), "remote"
        else:
            self._pending.append(Event("note", "OS metrics only on the database host: run pgio-tui there, "
                                               "or grant pg_read_server_files to read the server's /proc"))
            return
        self.kernel = kernel.KernelSource(reader)
        if datadir:  # remotely pg_wal can't be followed if it is a symlink: roles are best effort there
            tablespaces = procfs.tablespace_dirs(datadir) if self.os_mode == "local" else ()
            self.device_roles = disks.device_roles(datadir, os.path.join(datadir, "pg_wal"), tablespaces, reader)
        devices = self.wanted_devices
        stats = disks.parse_diskstats(reader.read("/proc/diskstats") or "")
        if devices is None:  # the real disks, plus whatever PGDATA and pg_wal sit on
            found = disks.default_devices(stats)
            devices = found + [d for d in self.device_roles if d not in found]
        elif unknown := [d for d in devices if d not in stats]:
            self.pg.close()
            raise UnknownDevices(f"--devices: no such block device {', '.join(map(repr, unknown))} on the "
                                 f"database host; devices there: {', '.join(disks.default_devices(stats)) or 'none'}")
        self.disks = disks.DiskSource(reader, devices)
        if self.os_mode == "remote":
            self._pending.append(Event("note", "OS metrics read remotely from the server's /proc (labelled remote)"))

    def meta(self) -> dict[str, object]:
        t = self.pg.target
        return {
            "tool_version": __version__, "client_host": socket.gethostname(), "host": t.host,
            "port": t.port, "dbname": t.dbname, "user": t.user, "conninfo": t.conninfo,
            "server_version": self.pg.features.version, "server_version_num": self.pg.features.version_num,
            "interval_s": self.interval, "os_metrics": self.os_mode,
            "features": self.pg.features.summary(), "device_roles": self.device_roles,
        }

    @property
    def postmaster_start(self) -> float | None:
        """When the server last started (epoch s), as of the latest tick: the header's uptime."""
        return self._postmaster_start

    def settings_rows(self) -> list[tuple[str, str, str, str]]:
        """The settings snapshot: PostgreSQL I/O settings, kernel, devices, machine."""
        rows = [(n, v, self.setting_units.get(n, ""), "postgres") for n, v in sorted(self.settings.items())]
        if self.kernel is not None:
            rows += [(n, str(v), "", "kernel") for n, v in kernel.kernel_settings(self.kernel.reader).items()]
        if self.disks is not None:
            for dev in self.disks.devices:
                for n, v in disks.device_settings(dev, self.disks.reader).items():
                    rows.append((f"{dev}.{n}", str(v), "", "device"))
        return rows

    def close(self) -> None:
        if self._connecting is not None:
            self._connecting.abandon()
            self._connecting = None
        self.pg.close()

    # -- the loop ---------------------------------------------------------------------------
    def frames(self, stop: threading.Event | None = None, duration: float | None = None) -> Iterator[Frame]:
        """Yield one Frame per tick until `stop` is set or `duration` seconds have passed."""
        stop = stop or threading.Event()
        start = self.clock()
        wall0 = time.time() - start  # wall = wall0 + monotonic: one clock, no jumps mid-recording
        self._pending.insert(0, Event("start", f"sampling every {self.interval:g} s"))
        tick = 0
        while not stop.is_set():
            due = start + tick * self.interval
            if duration is not None and due - start > duration + 1e-9:
                return
            now = self.clock()
            if now < due:
                if stop.wait(due - now):
                    return
                now = self.clock()
            behind = int((now - due) // self.interval)
            if behind >= 1:  # whole ticks missed: skip their numbers, say so
                self._pending.append(Event("gap", f"{behind} tick(s) missed: the sampler was not running",
                                           {"ticks": behind}))
                tick += behind
                due = start + tick * self.interval
            late_ms = max(0.0, (now - due) * 1000)
            # The last tick of a --duration run pays out what burst counters still owe (publication.py).
            self._final = duration is not None and (tick + 1) * self.interval > duration + 1e-9
            frame = self.sample(tick, now - start, late_ms, wall0)
            yield frame
            tick += 1

    def sample(self, tick: int, elapsed: float, late_ms: float = 0.0, wall0: float | None = None) -> Frame:
        """Collect one tick from every source.

        The frame's time is the moment PostgreSQL answered: everything the server had done by
        then (a log line, a counter) belongs to this tick, nothing after it. `wall0` maps the
        monotonic clock to wall time for the whole session, so a clock step can't bend it.
        """
        t0 = time.perf_counter()
        frame = Frame(tick=tick, t=0.0, elapsed=elapsed, dt=None)
        frame.events.extend(self._pending)
        self._pending.clear()
        raw = self._sample_pg(tick, frame)
        mono = self.clock()
        frame.t = (time.time() - mono if wall0 is None else wall0) + mono
        frame.dt = dt = (mono - self._prev_mono) if self._prev_mono is not None else None
        if raw is not None:
            self._pg_values(raw, dt, frame)
        if self.kernel is not None:
            frame.values.update(self._guard(self.kernel.sample, dt, frame, {}))
        if self.disks is not None:
            frame.devices = self._guard(self.disks.sample, dt, frame, {})
            frame.device_roles = {d: r for d, r in self.device_roles.items() if d in frame.devices}
        for source in list(self.tick_sources):  # workloads: their latency wins over the server's view
            source.sample(frame)
        cpu = sum(os.times()[:2])
        frame.values[M.OBSERVER_CPU_MS] = (cpu - self._prev_cpu) * 1000 if self._prev_cpu is not None else None
        frame.values[M.OBSERVER_COLLECT_MS] = (time.perf_counter() - t0) * 1000
        frame.values[M.OBSERVER_LATE_MS] = late_ms
        if late_ms > self.interval * 500:
            frame.events.append(Event("late", f"tick started {late_ms:.0f} ms late", {"late_ms": late_ms}))
        self._prev_cpu, self._prev_mono = cpu, mono
        return frame

    @staticmethod
    def _guard(fn, dt, frame, empty):
        """An OS source failing (a device vanished, /proc unreadable) costs its figures, not the tick."""
        try:
            return fn(dt)
        except (OSError, ValueError) as exc:
            frame.events.append(Event("error", f"{getattr(fn, '__qualname__', fn)}: {exc}"))
            return empty

    # -- PostgreSQL -------------------------------------------------------------------------
    def _sample_pg(self, tick: int, frame: Frame) -> pgfeatures.RawSample | None:
        if self.pg.conn is None or self.pg.conn.closed:
            if not self._try_reconnect(tick, frame):
                return None
        kind = self._stmt_kind = self.statement_schedule.kind(tick)
        texts = self.statements.wanted_texts() if self.statement_schedule.texts_due(tick) else []
        self._stmt_texts = texts
        try:
            bufcache = self.clock() >= self._bufcache_next
            raw = self.pg.sample(kind, texts, self.statements.known() if kind == ROWS else None, bufcache)
        except SourceError as exc:
            self.pg.close()
            self._down(tick, frame, str(exc))
            return None
        if bufcache:
            self._bufcache_next = self.clock() + max(BUFCACHE_EVERY_S, self.interval) - self.interval / 2
        return raw

    def _down(self, tick: int, frame: Frame, why: str) -> None:
        if self._down_since_tick is None:
            self._down_since_tick = tick
            frame.events.append(Event("gap", f"PostgreSQL unreachable: {why}", {"reason": why}))
            self._forget_counters()
            self._reconnect_try = 0
            self._next_reconnect = self.clock() + RECONNECT_BACKOFF[0]

    def _try_reconnect(self, tick: int, frame: Frame) -> bool:
        """Reconnect on a thread (PendingConnect): the tick waits a quarter of the interval for it,
        then goes on with the OS figures and looks again at the next tick."""
        pending = self._connecting
        if pending is None:
            if self.clock() < self._next_reconnect:
                return False
            pending = self._connecting = PendingConnect(self.pg.conninfo)
        if not pending.done.wait(self.interval / 4):
            return False
        self._connecting = None
        try:
            if pending.error is not None:
                raise pending.error
            self.pg.open(pending.conn)
        except SourceError as exc:
            self._reconnect_try += 1
            wait = RECONNECT_BACKOFF[min(self._reconnect_try, len(RECONNECT_BACKOFF) - 1)]
            self._next_reconnect = self.clock() + wait
            if self._down_since_tick is None:
                self._down(tick, frame, str(exc))
            return False
        missed = tick - (self._down_since_tick if self._down_since_tick is not None else tick)
        frame.events.append(Event("reconnect", f"reconnected after {missed} tick(s) without PostgreSQL",
                                  {"ticks": missed}))
        self._down_since_tick = None
        self._forget_counters()
        self.statement_schedule.reset()
        if self.tracker is not None:
            self.tracker.reset()
        return True

    def _pg_values(self, raw: pgfeatures.RawSample, dt: float | None, frame: Frame) -> None:
        """Restart/reset/setting-change detection, rates, activity and checkpoint state."""
        prev = self._prev_raw
        pm = raw["postmaster_start"]
        if self._postmaster_start is not None and pm != self._postmaster_start:
            frame.events.append(Event("server_restart", "PostgreSQL restarted: counters start over"))
            prev = None
            self._forget_counters()
            self.tracker.reset()
        self._postmaster_start = pm
        if raw["settings_md5"] != self._settings_md5:
            if self._settings_md5 is not None:
                self._settings_changed(frame)
            self._settings_md5 = raw["settings_md5"]

        counters = pgfeatures.checkpoint_counters(raw["bgwriter"], raw["checkpointer"])
        pcounters = pgfeatures.checkpoint_counters(prev["bgwriter"], prev["checkpointer"]) if prev else None
        if pcounters and (counters["stats_reset"] != pcounters["stats_reset"]
                          or counters["started"] < pcounters["started"]):
            frame.events.append(Event("stats_reset", "checkpoint/bgwriter statistics were reset"))
            self.tracker.reset()
            prev = pcounters = None

        self._rates(raw, prev or {}, dt, frame)
        self._statements(raw, frame)
        self._activity(raw["activity"], frame)

        control = raw["control"] or {}
        bufcache = raw.get("bufcache") or {}
        out = self.tracker.update(TickInput(
            tick=frame.tick, t=frame.t, counters=counters, busy=pgfeatures.checkpointer_busy(raw["activity"]),
            wait=pgfeatures.checkpointer_wait(raw["activity"]), server_t=raw["server_t"],
            checkpoint_lsn=control.get("checkpoint_lsn"), checkpoint_time=control.get("checkpoint_time"),
            redo_lsn=control.get("redo_lsn"), wal_pos=raw["wal_pos"],
            log_entries=self.checkpoint_log.entries(raw["log_lines"], raw.get("checkpointer_pid")),
            dirty_buffers=bufcache.get("buffers_dirty")))
        if out.wants_dirty_scan and pcounters:  # a checkpoint started: how many buffers are dirty now
            written = counters["buffers"] - pcounters["buffers"]
            self.tracker.set_dirty_estimate(self.pg.dirty_buffers_now(), written)
        frame.values[M.BUFFERS_USED] = bufcache.get("buffers_used")
        frame.values[M.BUFFERS_DIRTY] = bufcache.get("buffers_dirty")
        frame.values.update(out.values)
        frame.events.extend(Event(k, text, data) for k, text, data in out.events)
        frame.checkpoints.extend(out.finished)
        frame.values[M.OBSERVER_SERVER_MS] = raw["server_ms"]
        self._prev_raw = raw

    def _rate(self, name: str, cur, prev, dt: float | None, tick: int) -> float | None:
        """Per-second rate of one cumulative counter; backend-published ones spread (publication.py)."""
        r = rate(cur, prev, dt)
        if name in pgfeatures.PUBLISHED_AS_WRITTEN:
            return r
        paid = self.spreader.delta(name, None if r is None else r * dt, tick, dt, final=self._final)
        return None if paid is None else paid / dt

    def _rates(self, raw: pgfeatures.RawSample, prev: pgfeatures.RawSample | dict, dt: float | None,
               frame: Frame) -> None:
        """Every cumulative counter of the sample as a per-second rate, in this one place."""
        v, tick = frame.values, frame.tick
        writes = pgfeatures.writes_by_source(raw["bgwriter"], raw["io"])
        pwrites = pgfeatures.writes_by_source(prev["bgwriter"], prev["io"]) if prev else {}
        for name, value in writes.items():
            v[name] = self._rate(name, value, pwrites.get(name), dt, tick)
        for metric, section, col in COUNTER_RATES:
            v[metric] = self._rate(metric, (raw[section] or {}).get(col), (prev.get(section) or {}).get(col), dt, tick)
        v[M.WAL_BYTES_S] = rate(raw["wal_pos"], prev.get("wal_pos"), dt)  # the insert position: live
        v[M.DB_BACKENDS] = (raw["db"] or {}).get("backends")
        v[M.LATENCY_TPS] = v[M.DB_XACT_S]  # a launched workload replaces it with its own count
        Sampler._statement_latency(raw.get("pgss"), prev.get("pgss"), dt, v)
        pio = prev.get("io") or {}
        for btype, cols in (raw["io"] or {}).items():
            pcols = pio.get(btype) or [None] * len(cols)
            frame.sources[btype] = {f: self._rate(f"{btype}.{f}", c, pc, dt, tick)
                                    for f, c, pc in zip(SOURCE_FIELDS, cols, pcols)}

    def _forget_counters(self) -> None:
        """Counters start over (gap, reconnect, restart): no rate until two new samples."""
        self._prev_raw = None
        self._prev_sums = self._prev_rows_t = None
        self.statements.reset()

    def _statements(self, raw: dict, frame: Frame) -> None:
        """pg_stat_statements: the top statements over the window since the last read of every
        entry (the all-statement sums are read every tick: see _rates)."""
        kind, v = self._stmt_kind, frame.values
        t0, t1 = raw.get("statements_t0"), raw.get("statements_t1")
        baseline = kind == ROWS and self.statements.baseline  # reads every entry: not the usual cost
        self.statement_schedule.done(frame.tick, kind, (t1 - t0) * 1000 if t0 and t1 and not baseline else None,
                                     texts=bool(self._stmt_texts))
        new_texts = self.statements.got_texts(self._stmt_texts, raw.get("pgss_texts"))
        own = [q for q, text in new_texts.items() if text.startswith(pgfeatures.TICK_MARKER)]
        if own:  # another pgio-tui's tick statement (or ours, before find_own_queryid saw it)
            self.pg.skip_queryids(own)
            for q in own:
                del new_texts[q]
        if new_texts:
            frame.statement_texts.update(new_texts)
        server_t = raw["server_t"]
        if kind == ROWS:
            window = server_t - self._prev_rows_t if self._prev_rows_t is not None else None
            frame.statements = self.statements.update(raw.get("pgss_rows"), window)
            if window is not None:
                v[M.STATEMENTS_WINDOW_S] = window
            self._prev_rows_t = server_t
            for s in frame.statements:  # a text known from before reaches this frame's consumers once
                q = s["queryid"]
                if q in self.statements.texts and q not in self._texts_sent:
                    frame.statement_texts.setdefault(q, self.statements.texts[q])
        self._texts_sent.update(frame.statement_texts)
        if t0 and t1:
            v[M.OBSERVER_STATEMENTS_MS] = (t1 - t0) * 1000

    @staticmethod
    def _statement_latency(cur: dict | None, prev: dict | None, dt: float | None, v: dict) -> None:
        """Interval mean/stddev of the statements pg_stat_statements timed (top-level, utility and
        our own left out): statement execution time, not transaction latency (`latency.*`)."""
        v[M.STATEMENTS_CALLS_S] = v[M.STATEMENTS_MEAN_MS] = v[M.STATEMENTS_STDDEV_MS] = None
        if not cur or not prev or not dt:
            return
        calls = (cur["calls"] or 0) - (prev["calls"] or 0)
        total = (cur["total_ms"] or 0) - (prev["total_ms"] or 0)
        sumsq = (cur["sumsq"] or 0) - (prev["sumsq"] or 0)
        if calls < 0 or total < 0:  # entries evicted or reset: unknown this tick
            return
        v[M.STATEMENTS_CALLS_S] = calls / dt
        if calls > 0:
            mean = total / calls
            v[M.STATEMENTS_MEAN_MS] = mean
            v[M.STATEMENTS_STDDEV_MS] = max(0.0, sumsq / calls - mean * mean) ** 0.5 if sumsq >= 0 else None

    @staticmethod
    def _activity(activity: list | None, frame: Frame) -> None:
        """Session counts and the wait sample. Idle main loops (Activity) and idle clients are not waits."""
        active = io_wait = lock_wait = 0
        waits: dict[tuple[str, str, str], int] = {}
        for btype, wtype, wevent, state, n in activity or ():
            if btype is None:  # another role's backend without pg_read_all_stats
                continue
            client = btype == "client backend"
            if client and state == "active":
                active += n
            if wtype == "IO":
                io_wait += n
            elif wtype in ("Lock", "LWLock"):
                lock_wait += n
            if wtype == "Activity" or (client and state in (None, "idle")):
                continue
            key = (btype, wtype or "CPU", wevent or "Running")
            waits[key] = waits.get(key, 0) + n
        frame.values.update({M.SESSIONS_ACTIVE: active, M.SESSIONS_IO_WAIT: io_wait, M.SESSIONS_LOCK_WAIT: lock_wait})
        frame.waits = [(b, t, e, n) for (b, t, e), n in sorted(waits.items(), key=lambda kv: -kv[1])]

    def _settings_changed(self, frame: Frame) -> None:
        old = dict(self.settings)
        try:
            self._load_settings()
        except SourceError:
            return
        for name, value in self.settings.items():
            if old.get(name) != value:
                unit = self.setting_units.get(name, "")
                frame.events.append(Event("setting_change", f"{name}: {old.get(name)} -> {value} {unit}".rstrip(),
                                          {"name": name, "old": old.get(name), "new": value, "unit": unit}))
        self.tracker.settings = CheckpointSettings.from_settings(self.settings)
        if old.get("log_line_prefix") != self.settings.get("log_line_prefix") and self.tracker.mode == "log":
            if not self._log_trusted():
                self.tracker.mode = "counters"
                frame.events.append(Event("note", self.pg.features.notes[-1]))
