"""The Sampler: set-up, the fixed tick schedule, and one Frame from every source per tick.

Ticks follow a fixed schedule (start + k * interval), so there is no drift. A late tick is
recorded with how late it was; ticks that could not run at all (the machine was suspended, the
sampler stalled) are skipped numbers plus a `gap` event, never silently dropped. What the
PostgreSQL sample adds to the frame is postgres_tick.py's.
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
from pgio_tui.frame import Event, Frame
from pgio_tui.publication import Spreader
from pgio_tui.sampler.backends_tick import BackendsTick
from pgio_tui.sampler.postgres_tick import PostgresTick
from pgio_tui.sources import disks, kernel, logaccess, procfs
from pgio_tui.sources.checkpoint import CheckpointSettings, CheckpointTracker
from pgio_tui.sources.postgres import PendingConnect, PostgresSource, SourceError
from pgio_tui.sources.backends import DENIED, DENIED_NOTE, LOCAL, NOT_LOCAL_NOTE, BackendTracker, proc_io_mode
from pgio_tui.sources.procfs import LocalProc, RemoteProc
from pgio_tui.sources.slowlog import SlowStatements
from pgio_tui.sources.statements import StatementSchedule, StatementTracker
from pgio_tui.sources.tick_sql import RawSample

MIN_INTERVAL, MAX_INTERVAL = 0.1, 60.0


class UnknownDevices(SourceError):
    """--devices named a device the database host does not have."""


class Sampler(PostgresTick, BackendsTick):
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
        self.slowlog: SlowStatements | None = None  # counts the server log's duration: lines
        self.checkpoint_log = logaccess.CheckpointLog()  # whose server log lines count
        self.spreader = Spreader()  # counters published in bursts, paid out evenly
        self._final = False  # this tick is the session's last
        self.kernel: kernel.KernelSource | None = None
        self.disks: disks.DiskSource | None = None
        self._prev_raw: RawSample | None = None
        self._prev_derived: tuple[dict, dict] | None = None  # _prev_raw's checkpoint counters and writes by source
        self._source_names: dict[str, tuple[str, ...]] = {}  # backend type -> its counters' names
        self._io_names: dict[tuple, tuple[str, ...]] = {}  # pg_stat_io row -> its counters' names
        self._prev_mono: float | None = None
        self._prev_cpu: float | None = None
        self._settings_md5: str | None = None
        self._postmaster_start: float | None = None
        self._pending: list[Event] = []
        self._next_reconnect = 0.0
        self._connecting: PendingConnect | None = None
        self._reconnect_try = 0
        self._down_since_tick: int | None = None
        self.backends = BackendTracker()  # per-process I/O (its /proc mode is set in _setup_os)
        self.pg.recent_s = interval + 2  # an idle client is listed once after its last state change
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
        if self.backends.proc_mode != LOCAL:  # said in the banner and the Backends view
            features.notes.append(DENIED_NOTE if self.backends.proc_mode == DENIED else NOT_LOCAL_NOTE)
        if not features.logfile and self.os_mode == "local":
            logaccess.find_local_log(self.pg, self.settings)
        self.tracker = CheckpointTracker(CheckpointSettings.from_settings(self.settings), self._log_trusted())
        self.slowlog = logaccess.slow_statements(self.pg, self.settings)
        for note in features.notes:
            self._pending.append(Event("note", note))

    def _setup_os(self) -> None:
        """OS figures only from the database host: locally, or the server's /proc through SQL."""
        datadir = self.pg.features.data_directory
        reader = None
        if procfs.same_cluster_locally(datadir, self.pg):
            reader, self.os_mode = LocalProc(), "local"
            self.backends.proc_mode = proc_io_mode(self.pg.conn.info.backend_pid)
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
        for source in (self.kernel, self.disks, self.backends):  # the /proc files they keep open
            if source is not None:
                source.close()

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
