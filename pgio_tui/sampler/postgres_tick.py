"""What one PostgreSQL sample adds to a frame: the Sampler's server half.

The connection may go away and come back (reconnect on a thread, with back-off), the server may
restart or its statistics be reset (counters start over: no rate until two new samples), and
settings may change (re-read, reported as events). The Sampler (loop.py) holds one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from pgio_tui import metrics as M
from pgio_tui.frame import SOURCE_FIELDS, Event, Frame, relation_sums
from pgio_tui.publication import Spreader
from pgio_tui.sampler.backends_tick import backends_tick
from pgio_tui.sampler.rates import COLUMN_GAUGES, COUNTER_RATES, io_row_rates, rate, sessions_and_waits, statement_latency
from pgio_tui.sources import logaccess, pg_counters
from pgio_tui.sources.backends import BackendTracker, backends_every
from pgio_tui.sources.checkpoint import CheckpointSettings, CheckpointTracker, TickInput
from pgio_tui.sources.pgfeatures import is_own
from pgio_tui.sources.postgres import PendingConnect, PostgresSource, SourceError
from pgio_tui.sources.slowlog import SlowStatements
from pgio_tui.sources.statements import ROWS, SUMS, StatementSchedule, StatementTracker
from pgio_tui.sources.tick_sql import RawSample

_AS_WRITTEN = pg_counters.PUBLISHED_AS_WRITTEN
RECONNECT_BACKOFF = (1, 2, 4, 8, 15)  # seconds between reconnect attempts while the server is away
BUFCACHE_EVERY_S = 10.0  # pg_buffercache_summary() visits every buffer header: read it this often


class PostgresTick:
    """The PostgreSQL half of the Sampler: its connection (PostgresSource), settings, checkpoint
    tracker, statements and the previous sample the next tick's rates start from."""

    def __init__(self, pg: PostgresSource, interval: float, clock: Callable[[], float], backends: BackendTracker):
        self.pg = pg
        self.interval = interval
        self.clock = clock
        self.backends = backends  # per-process I/O; the Sampler sets its /proc mode
        self.local = False  # the server runs on this machine: its log files may be read directly
        self.settings: dict[str, str] = {}  # name -> value in pg_settings' base unit
        self.setting_units: dict[str, str] = {}  # name -> that unit ('8kB', 's', 'MB', ...)
        self.tracker = CheckpointTracker(CheckpointSettings.from_settings({}), False)  # defaults until open()
        self.slowlog: SlowStatements | None = None  # counts the server log's duration: lines
        self.checkpoint_log = logaccess.CheckpointLog()  # whose server log lines count
        self.spreader = Spreader()  # counters published in bursts, paid out evenly
        self.final = False  # this tick is the session's last
        self.statement_schedule = StatementSchedule(interval)
        self.statements = StatementTracker()
        self._prev_raw: RawSample | None = None
        self._prev_derived: tuple[dict, dict] | None = None  # _prev_raw's checkpoint counters and writes by source
        self._source_names: dict[str, tuple[str, ...]] = {}  # backend type -> its counters' names
        self._io_names: dict[tuple, tuple[str, ...]] = {}  # pg_stat_io row -> its counters' names
        self._settings_md5: str | None = None
        self.postmaster_start: float | None = None  # when the server last started (epoch s), as of the last tick
        self._next_reconnect = 0.0
        self._connecting: PendingConnect | None = None
        self._reconnect_try = 0
        self._down_since_tick: int | None = None
        self._bufcache_next = 0.0  # clock time from which the next tick reads pg_buffercache_summary()
        self._stmt_kind = 0  # what this tick reads of pg_stat_statements
        self._stmt_texts: list[int] = []  # queryids whose text this tick asks for
        self._texts_sent: set[int] = set()  # queryids whose text went out in a frame
        self._prev_sums: tuple[dict, float] | None = None  # last statement sums and the server time
        self._prev_rows_t: float | None = None  # server time of the last read of every entry
        # pg_stat_activity on every k-th tick with many processes (backends_every): the processes
        # as of the last tick, the ticks since the last read, and the seconds from it to this tick's start.
        self._processes: int | None = None
        self._backends_unread = 0
        self._backends_dt: float | None = 0.0
        self._checkpointer_pid: int | None = None  # as of the last read (its log lines are told by it)

    def open(self, local: bool) -> None:
        """Read the settings and find the server log, once connected (`local`: on this machine)."""
        self.local = local
        self.statement_schedule.enabled = self.pg.features.pgss_schema is not None
        self._load_settings()
        if not self.pg.features.logfile and local:
            logaccess.find_local_log(self.pg, self.settings)
        self.tracker = CheckpointTracker(CheckpointSettings.from_settings(self.settings), self._log_trusted())
        self.slowlog = logaccess.slow_statements(self.pg, self.settings)

    def close(self) -> None:
        """Stop waiting for a reconnect (the connection itself is the Sampler's to close)."""
        if self._connecting is not None:
            self._connecting.abandon()
            self._connecting = None

    def _log_trusted(self) -> bool:
        """Can checkpoint lines in the server log be told from forgeries? If not, say why (a note)."""
        self.checkpoint_log, why = logaccess.checkpoint_log(self.pg, self.settings, self.local)
        if why is not None:
            self.pg.features.notes.append(why)
        return self.checkpoint_log.trusted

    def _load_settings(self) -> list[tuple[str, str, str, str]]:
        rows = self.pg.settings()
        self.settings = {name: value for name, value, _unit, _ctx in rows}
        self.setting_units = {name: unit for name, _value, unit, _ctx in rows}
        return rows

    def sample(self, tick: int, frame: Frame) -> RawSample | None:
        """Read the server once (the tick statement), reconnecting when it is away; None if it is."""
        if self.pg.conn is None or self.pg.conn.closed:
            if not self._try_reconnect(tick, frame):
                return None
        kind = self._stmt_kind = self.statement_schedule.kind(tick)
        due = self.final or self.statement_schedule.texts_due(tick, self.statements.fresh_wanted())
        texts = self.statements.wanted_texts() if due else []
        self._stmt_texts = texts
        try:
            bufcache = self.clock() >= self._bufcache_next
            read_backends = self._backends_unread + 1 >= backends_every(self._processes)
            raw = self.pg.sample(kind, texts, self.statements.known() if kind & ROWS else None, bufcache,
                                 read_backends)
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
        self.tracker.reset()
        return True

    def values(self, raw: RawSample, dt: float | None, frame: Frame) -> None:
        """Restart/reset/setting-change detection, rates, activity and checkpoint state."""
        prev = self._prev_raw
        pm = raw["postmaster_start"]
        if self.postmaster_start is not None and pm != self.postmaster_start:
            frame.events.append(Event("server_restart", "PostgreSQL restarted: counters start over"))
            prev = None
            self._forget_counters()
            self.tracker.reset()
        self.postmaster_start = pm
        if raw["settings_md5"] != self._settings_md5:
            # Adopted only once the settings were read: a failed read is tried again next tick,
            # not taken for done (the change would otherwise never be followed).
            if self._settings_md5 is None or self._settings_changed(frame):
                self._settings_md5 = raw["settings_md5"]

        counters = pg_counters.checkpoint_counters(raw["bgwriter"], raw["checkpointer"])
        derived = self._prev_derived if prev else None  # prev is _prev_raw: derived from it last tick
        pcounters = derived[0] if derived else None
        if pcounters and (counters["stats_reset"] != pcounters["stats_reset"]
                          or counters["started"] < pcounters["started"]):
            frame.events.append(Event("stats_reset", "checkpoint/bgwriter statistics were reset"))
            self.tracker.reset()
            prev = pcounters = None

        writes = self._rates(raw, prev or {}, dt, frame)
        self._statements(raw, frame)
        sessions_and_waits(raw["activity"], frame)
        busy = backends_tick(self.backends, raw, self._since_backends(raw, dt), frame, self.pg.features.aios)
        self.statements.want_texts(busy)  # asked for once per queryid, as the top statements' are
        self._send_texts(busy, frame)
        if self.final:  # the session's last tick: what it wanted a text for is read now
            self._last_texts(frame)

        control = raw["control"] or {}
        bufcache = raw.get("bufcache") or {}
        out = self.tracker.update(TickInput(
            tick=frame.tick, t=frame.t, counters=counters, busy=pg_counters.checkpointer_busy(raw["activity"]),
            wait=pg_counters.checkpointer_wait(raw["activity"]), server_t=raw["server_t"],
            checkpoint_lsn=control.get("checkpoint_lsn"), checkpoint_time=control.get("checkpoint_time"),
            redo_lsn=control.get("redo_lsn"), wal_pos=raw["wal_pos"],
            log_entries=self.checkpoint_log.entries(raw["log_lines"], self._checkpointer_pid),
            dirty_buffers=bufcache.get("buffers_dirty")))
        if out.wants_dirty_scan and pcounters:  # a checkpoint started: how many buffers are dirty now
            written = counters["buffers"] - pcounters["buffers"]
            self.tracker.set_dirty_estimate(self.pg.dirty_buffers_now(), written)
        frame.values[M.BUFFERS_USED] = bufcache.get("buffers_used")
        frame.values[M.BUFFERS_DIRTY] = bufcache.get("buffers_dirty")
        frame.values.update(out.values)
        frame.events.extend(Event(k, text, data) for k, text, data in out.events)
        frame.checkpoints.extend(out.finished)
        if self.slowlog is not None:  # statements over 100-500 ms, whoever ran them
            for ms, n in self.slowlog.count(raw["log_lines"]).items():
                frame.values[M.STATEMENTS_LOG_OVER[ms]] = n
        frame.values[M.OBSERVER_SERVER_MS] = raw["server_ms"]
        self._prev_raw, self._prev_derived = raw, (counters, writes)
        if (raw["db"] or {}).get("backends") is not None:  # read with the processes: kept till the next read
            self._processes = raw["db"]["backends"]

    def _since_backends(self, raw: RawSample, dt: float | None) -> float | None:
        """Seconds since pg_stat_activity was last read, when it is read this tick (the per-process
        rates are over them); counts the ticks that did not read it (backends_every)."""
        if raw["backends"] is None:  # not read this tick
            self._backends_unread += 1
            self._backends_dt = None if dt is None or self._backends_dt is None else self._backends_dt + dt
            return None
        since = None if dt is None or self._backends_dt is None else self._backends_dt + dt
        self._backends_unread, self._backends_dt = 0, 0.0
        self._checkpointer_pid = raw.get("checkpointer_pid")
        return since

    def _rate(self, name: str, cur, prev, dt: float | None, tick: int, as_written: bool | None = None) -> float | None:
        """Per-second rate of one cumulative counter; backend-published ones spread (publication.py).
        as_written: whether its publisher writes it as it works (default: the catalog says)."""
        r = rate(cur, prev, dt)
        if name in _AS_WRITTEN if as_written is None else as_written:
            return r
        if r is None or not dt:  # unknown: the spreader forgets what it held (None)
            return self.spreader.delta(name, None, tick, dt)
        paid = self.spreader.delta(name, r * dt, tick, dt, self.final)
        return None if paid is None else paid / dt

    def _rates(self, raw: Mapping[str, Any], prev: Mapping[str, Any], dt: float | None,
               frame: Frame) -> dict[str, float | None]:
        """Every cumulative counter of the sample as a per-second rate, in this one place. Returns
        the sample's cumulative writes by source (the next tick's previous ones). The samples are
        read by name: COUNTER_RATES names their sections."""
        v, tick, rate_of = frame.values, frame.tick, self._rate
        writes = pg_counters.writes_by_source(raw["bgwriter"], raw["io"])
        derived = self._prev_derived if prev else None  # prev is _prev_raw: derived from it last tick
        pwrites = derived[1] if derived else {}
        for name, value in writes.items():
            v[name] = rate_of(name, value, pwrites.get(name), dt, tick)
        for metric, section, col in COUNTER_RATES:
            v[metric] = rate_of(metric, (raw[section] or {}).get(col), (prev.get(section) or {}).get(col), dt, tick)
        v[M.WAL_BYTES_S] = rate(raw["wal_pos"], prev.get("wal_pos"), dt)  # the insert position: live
        for metric, section, col in COLUMN_GAUGES:
            v[metric] = (raw[section] or {}).get(col)
        v[M.LATENCY_TPS] = v[M.DB_XACT_S]  # a launched workload replaces it with its own count
        if raw.get("io_rows") is not None:  # 16+: pg_stat_io by row, and its sums by backend type from them
            frame.io = io_row_rates(raw["io_rows"], prev.get("io_rows") if prev else None,
                                    lambda bt, name, c, pc: rate_of(name, c, pc, dt, tick, bt in M.STEADY_PUBLISHERS),
                                    self._io_names)
            frame.sources = relation_sums(frame.io)
            return writes
        pio = prev.get("io") or {}
        names = self._source_names
        for btype, cols in (raw["io"] or {}).items():
            pcols = pio.get(btype) or [None] * len(cols)
            counter_names = names.get(btype)
            if counter_names is None:  # "client backend.writes", ...: made once per backend type
                counter_names = names[btype] = tuple(f"{btype}.{f}" for f in SOURCE_FIELDS)
            frame.sources[btype] = {f: rate_of(name, c, pc, dt, tick)
                                    for f, name, c, pc in zip(SOURCE_FIELDS, counter_names, cols, pcols)}
        return writes

    def _forget_counters(self) -> None:
        """Counters start over (gap, reconnect, restart): no rate until two new samples."""
        self._prev_raw = self._prev_derived = None
        self._prev_sums = self._prev_rows_t = None
        self.statements.reset()
        self.backends.reset()
        self._processes = self._checkpointer_pid = None  # pg_stat_activity read at the next tick

    def _statements(self, raw: RawSample, frame: Frame) -> None:
        """pg_stat_statements: all-statement latency over the window since the last read of the
        sums, and the top statements over the window since the last read of every entry. Both
        are read on the schedule's budget (StatementSchedule), not every tick."""
        kind, v = self._stmt_kind, frame.values
        t0, tm, t1 = raw.get("statements_t0"), raw.get("statements_tm"), raw.get("statements_t1")
        baseline = kind & ROWS and self.statements.baseline  # reads every entry: not the usual cost
        parts = {SUMS: (tm - t0) * 1000 if t0 and tm else None,
                 ROWS: (t1 - tm) * 1000 if tm and t1 and not baseline else None}
        server_ms = raw.get("server_ms")  # the rest of the tick sets what the reads may cost
        base = server_ms - (t1 - t0) * 1000 if server_ms is not None and t0 and t1 else None
        self.statement_schedule.done(frame.tick, kind, parts, texts=bool(self._stmt_texts), base_ms=base)
        server_t = raw["server_t"]
        sums = raw.get("pgss")  # from a read of the sums, or of every entry
        if sums is not None:
            prev = self._prev_sums
            statement_latency(sums, prev[0] if prev else None, server_t - prev[1] if prev else None, v)
            self._prev_sums = (sums, server_t)
        else:  # no read this tick: unknown, not zero
            v[M.STATEMENTS_CALLS_S] = v[M.STATEMENTS_MEAN_MS] = v[M.STATEMENTS_STDDEV_MS] = None
        new_texts = self.statements.got_texts(self._stmt_texts, raw.get("pgss_texts"))
        own = [q for q, text in new_texts.items() if self._own_text(q, text)]
        if own:  # another pgio-tui's tick statement (or ours, before find_own_queryid saw it)
            self.pg.skip_queryids(own)
            for q in own:
                del new_texts[q]
        if new_texts:
            frame.statement_texts.update(new_texts)
        if kind & ROWS:
            window = server_t - self._prev_rows_t if self._prev_rows_t is not None else None
            frame.statements = self.statements.update(raw.get("pgss_rows"), window, raw.get("pgss_reset"))
            if window is not None:
                v[M.STATEMENTS_WINDOW_S] = window
            self._prev_rows_t = server_t
            self._send_texts([s["queryid"] for s in frame.statements], frame)
        self._texts_sent.update(frame.statement_texts)
        if t0 and t1:
            v[M.OBSERVER_STATEMENTS_MS] = (t1 - t0) * 1000

    def _send_texts(self, queryids: list[int], frame: Frame) -> None:
        """A text known from before reaches the frame's consumers once, when its statement shows."""
        for q in queryids:
            if q in self.statements.texts and q not in self._texts_sent:
                frame.statement_texts.setdefault(q, self.statements.texts[q])
        self._texts_sent.update(frame.statement_texts)

    def _last_texts(self, frame: Frame) -> None:
        """Read the texts still wanted at once (the last tick: no later tick would bring them)."""
        asked = self.statements.wanted_texts()
        if not asked:
            return
        new = self.statements.got_texts(asked, self.pg.statement_texts(asked))
        for q, text in new.items():
            if self._own_text(q, text):
                self.pg.skip_queryids([q])
            else:
                frame.statement_texts[q] = text
        self._texts_sent.update(frame.statement_texts)

    def _own_text(self, queryid: int, text: str) -> bool:
        """Is this statement the observer's? On 14+ by its query id (what it ran); on 13, which has
        none, by the marker of its text (see statements_sql.skip_queryids_sql)."""
        if self.pg.features.activity_query_id:
            return queryid in self.pg.own_queryids
        return is_own(text)

    def _settings_changed(self, frame: Frame) -> bool:
        """Re-read the settings after their fingerprint changed; False when they could not be read."""
        old = dict(self.settings)
        try:
            self._load_settings()
        except SourceError:
            return False
        for name, value in self.settings.items():
            if old.get(name) != value:
                unit = self.setting_units.get(name, "")
                frame.events.append(Event("setting_change", f"{name}: {old.get(name)} -> {value} {unit}".rstrip(),
                                          {"name": name, "old": old.get(name), "new": value, "unit": unit}))
        self.tracker.settings = CheckpointSettings.from_settings(self.settings)
        if old.get("log_min_duration_statement") != self.settings.get("log_min_duration_statement"):
            self.slowlog = logaccess.slow_statements(self.pg, self.settings)
        if old.get("log_line_prefix") != self.settings.get("log_line_prefix") and self.tracker.mode == "log":
            if not self._log_trusted():
                self.tracker.mode = "counters"
                frame.events.append(Event("note", self.pg.features.notes[-1]))
        return True
