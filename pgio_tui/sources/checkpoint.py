"""Checkpoint state per tick: is one running, which kind, how far along, when is the next due.

No PostgreSQL release exposes a running checkpoint (pg_stat_progress_checkpoint was never
committed), so the state is inferred. Two modes:

* log: the server log is readable and log_checkpoints is on. `checkpoint starting:` and
  `checkpoint complete:` lines give exact start/end ticks, the kind and the timings.
* counters: otherwise. A start is a rise of the started counter with buffers written (a skipped
  checkpoint on an idle system writes none and leaves pg_control alone), or the checkpointer's
  wait event leaving CheckpointerMain (needs pg_monitor); the end is pg_control's checkpoint_lsn
  changing (18: num_done rising).

`checkpoint.active` is 1 for every tick whose interval saw the checkpoint running, so even a
CHECKPOINT command shorter than a tick shows as one tick.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from dataclasses import dataclass, field

from pgio_tui import metrics as M
from pgio_tui.sources.checkpoint_rows import TOO_FREQUENT

_START = re.compile(r"\b(?P<what>checkpoint|restartpoint) starting:(?P<flags>(?: [a-z-]+)*)\s*$")
_COMPLETE = re.compile(
    r"\b(?P<what>checkpoint|restartpoint) complete: wrote (?P<buffers>\d+) buffers \((?P<pct>[\d.]+)%\)"
    r"(?:, wrote (?P<slru>\d+) SLRU buffers)?; "
    r"(?P<added>\d+) WAL file\(s\) added, (?P<removed>\d+) removed, (?P<recycled>\d+) recycled; "
    r"write=(?P<write>[\d.]+) s, sync=(?P<sync>[\d.]+) s, total=(?P<total>[\d.]+) s; "
    r"sync files=(?P<files>\d+), longest=(?P<longest>[\d.]+) s, average=(?P<average>[\d.]+) s; "
    r"distance=(?P<distance>\d+) kB, estimate=(?P<estimate>\d+) kB"
    r"(?:; lsn=(?P<lsn>[0-9A-F]+/[0-9A-F]+), redo lsn=(?P<redo>[0-9A-F]+/[0-9A-F]+))?")


def kind_from_flags(flags: str) -> str:
    """The start line's flags (' immediate force wait', ' time', ...) to one word."""
    words = set(flags.split())
    for kind in ("shutdown", "end-of-recovery", "immediate", "wal", "time"):
        if kind in words:
            return kind
    return "requested"


def parse_log_line(line: str) -> tuple[str, dict] | None:
    """('start', {...}) / ('complete', {...}) / ('too_frequent', {...}) for checkpoint lines."""
    if m := _START.search(line):
        return "start", {"what": m["what"], "flags": m["flags"].strip(), "kind": kind_from_flags(m["flags"])}
    if m := _COMPLETE.search(line):
        d = m.groupdict()
        out: dict = {"what": d["what"], "log_buffers": int(d["buffers"]),
                     "slru_buffers": int(d["slru"]) if d["slru"] else None,
                     "wal_added": int(d["added"]), "wal_removed": int(d["removed"]),
                     "wal_recycled": int(d["recycled"]), "write_s": float(d["write"]),
                     "sync_s": float(d["sync"]), "total_s": float(d["total"]),
                     "sync_files": int(d["files"]), "longest_s": float(d["longest"]),
                     "average_s": float(d["average"]), "buffers_pct": float(d["pct"]),
                     "distance_kb": int(d["distance"]),
                     "estimate_kb": int(d["estimate"]), "lsn": d["lsn"], "redo_lsn": d["redo"]}
        return "complete", out
    if m := TOO_FREQUENT.search(line):
        return "too_frequent", {"seconds": int(m["s"])}
    return None


_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) ")


def log_time(line: str, server_t: float, window: float) -> float | None:
    """The server-clock epoch of a log line whose prefix starts with %m or %t, else None.

    The time zone abbreviation is not parsed (log_timezone can be anything); the line was written
    during the last tick, so the zone's offset is whatever rounds the stamp to within that window,
    in quarter hours.
    """
    m = _LOG_TIME.match(line)
    if not m:
        return None
    naive = datetime.fromisoformat(m[1]).replace(tzinfo=timezone.utc).timestamp()
    offset = round((naive - server_t) / 900) * 900
    stamp = naive - offset
    return stamp if server_t - window - 5 <= stamp <= server_t + 1 else None


def lsn_to_int(lsn: str | None) -> int | None:
    if not lsn:
        return None
    hi, _, lo = lsn.partition("/")
    return (int(hi, 16) << 32) + int(lo, 16)


@dataclass(slots=True)
class CheckpointSettings:
    timeout_s: float = 300.0
    completion_target: float = 0.9
    max_wal_size_mb: float = 1024.0
    wal_segment_size: int = 16 * 1024 * 1024
    log_checkpoints: bool = False
    shared_buffers: int | None = None  # in buffers (pg_settings' unit): a checkpoint's % of them

    @classmethod
    def from_settings(cls, settings: dict[str, str]) -> CheckpointSettings:
        def num(name, default):
            try:
                return float(settings[name])
            except (KeyError, TypeError, ValueError):
                return default
        buffers = num("shared_buffers", 0.0)
        return cls(num("checkpoint_timeout", 300.0), num("checkpoint_completion_target", 0.9),
                   num("max_wal_size", 1024.0), int(num("wal_segment_size", 16 * 1024 * 1024)),
                   settings.get("log_checkpoints") == "on", int(buffers) if buffers > 0 else None)

    @property
    def wal_trigger_bytes(self) -> float:
        """WAL distance from the redo point that requests a checkpoint (CalculateCheckpointSegments)."""
        segments = self.max_wal_size_mb * 1024 * 1024 / self.wal_segment_size
        return max(1, math.floor(segments / (1 + self.completion_target))) * self.wal_segment_size


@dataclass(slots=True)
class TickInput:
    """What the tracker needs from one tick (assembled by the sampler from the raw sample)."""

    tick: int
    t: float
    counters: dict  # pg_counters.checkpoint_counters()
    busy: bool | None  # checkpointer wait event says it is working; None = not visible
    checkpoint_lsn: str | None
    checkpoint_time: float | None
    redo_lsn: str | None
    wal_pos: float | None
    # The checkpointer's own log entries of this tick: (time stamp text or None, message);
    # serverlog.CheckpointerLines has already dropped every other process's lines.
    log_entries: list[tuple[str | None, str]] = field(default_factory=list)
    wait: str | None = None  # the checkpointer's wait event, normalised (pg_counters.normalise_wait)
    server_t: float | None = None  # the server's clock at this sample (for log line times)
    dirty_buffers: int | None = None  # pg_buffercache_summary().buffers_dirty (16+), on the ticks that read it


@dataclass(slots=True)
class TickOutput:
    values: dict
    events: list[tuple[str, str, dict]]  # (kind, text, data)
    finished: list[dict]  # checkpoint rows
    wants_dirty_scan: bool = False  # a start without a dirty count just before it: ask for one now


@dataclass(slots=True)
class _Running:
    start_tick: int
    start_t: float
    kind: str
    buffers_before: float
    write_ms_before: float
    sync_ms_before: float
    wal_at_start: float | None
    estimate: float | None
    source: str
    end_tick: int | None = None
    end_t: float | None = None
    log: dict = field(default_factory=dict)
    settle_ticks: int = 0


class CheckpointTracker:
    def __init__(self, settings: CheckpointSettings, log_readable: bool):
        self.settings = settings
        self.mode = "log" if (log_readable and settings.log_checkpoints) else "counters"
        self._prev: TickInput | None = None
        self._running: _Running | None = None
        self._finishing: list[_Running] = []  # ended, waiting for counters to catch up
        self._last_start_t: float | None = None
        self._last: dict = {"kind": None}
        # The checkpointer's busy and wait as last seen: a tick may not see it (no pg_read_all_stats,
        # or pg_stat_activity read every few ticks with many processes: sources/backends.backends_every).
        self._seen_busy: bool | None = None
        self._seen_wait: str | None = None

    def reset(self) -> None:
        """After a server restart or reconnect: counters start over, forget the baseline."""
        self._prev = None
        self._running = None
        self._finishing.clear()
        self._seen_busy = self._seen_wait = None

    # -- the step ---------------------------------------------------------------------------
    def update(self, x: TickInput) -> TickOutput:
        events: list[tuple[str, str, dict]] = []
        wants_scan = False
        prev, was_busy = self._prev, self._seen_busy
        if x.busy is not None:
            self._seen_busy = x.busy
        if x.wait is not None:
            self._seen_wait = x.wait
        if prev is None:
            self._prev = x
            self._last_start_t = x.checkpoint_time
            return TickOutput(self._values(x), events, [])
        c, pc = x.counters, prev.counters

        if self.mode == "log":
            for stamp, message in x.log_entries:
                parsed = parse_log_line(message)
                if parsed is None:
                    continue
                what, info = parsed
                at = self._when(stamp, x, prev)
                if what == "start" and self._running is None:
                    wants_scan = self._begin(x, prev, info["kind"], "log", events, at).estimate is None
                elif what == "complete" and self._running is not None:
                    self._running.log = info
                    self._end(x, events, at)
                elif what == "too_frequent":
                    events.append(("note", message.strip(), info))
            if c["started"] > pc["started"] and self._running is None and not self._finishing \
                    and c["buffers"] == pc["buffers"] and x.checkpoint_lsn == prev.checkpoint_lsn:
                self._last_start_t = x.t  # a skipped checkpoint (idle system) still resets the timer
        else:
            for _stamp, message in x.log_entries:  # log_checkpoints off: the warning still counts
                parsed = parse_log_line(message)
                if parsed is not None and parsed[0] == "too_frequent":
                    events.append(("note", message.strip(), parsed[1]))
            lsn_moved = x.checkpoint_lsn != prev.checkpoint_lsn
            done_rose = c["done"] is not None and pc["done"] is not None and c["done"] > pc["done"]
            started_rose = c["started"] > pc["started"]
            if self._running is None:
                real = started_rose and (c["buffers"] > pc["buffers"] or lsn_moved or done_rose)
                if real or (x.busy and was_busy is False):  # busy now, idle when last seen
                    kind = "time" if c["timed"] > pc["timed"] else ("requested" if started_rose else "unknown")
                    wants_scan = self._begin(x, prev, kind, "counters", events, (prev.t + x.t) / 2).estimate is None
                elif started_rose:
                    self._last_start_t = x.t  # skipped
            elif self._running.kind == "unknown" and started_rose:
                self._running.kind = "time" if c["timed"] > pc["timed"] else "requested"
            if self._running is not None and (lsn_moved or done_rose):
                self._end(x, events, max(self._running.start_t, (prev.t + x.t) / 2))

        values = self._values(x)  # before settling: a checkpoint that ended this tick still shows
        finished = self._settle(x)
        self._prev = x
        return TickOutput(values, events, finished, wants_scan)

    def set_dirty_estimate(self, dirty_now: int | None, written_so_far: float) -> None:
        """The one dirty-buffer count taken at a detected start (no count from the tick before)."""
        if self._running is not None and dirty_now is not None:
            self._running.estimate = dirty_now + written_so_far

    # -- helpers ----------------------------------------------------------------------------
    @staticmethod
    def _when(stamp_text: str | None, x: TickInput, prev: TickInput) -> float:
        """When a log line was written, on our clock: its own time stamp when it has one (the
        server's clock, corrected by the skew seen in this sample), else mid-tick."""
        if x.server_t is not None and stamp_text:
            stamp = log_time(stamp_text, x.server_t, x.t - prev.t)
            if stamp is not None:
                return min(x.t, max(prev.t, stamp - (x.server_t - x.t)))
        return (prev.t + x.t) / 2

    def _begin(self, x: TickInput, prev: TickInput, kind: str, source: str, events, at: float) -> _Running:
        """A checkpoint began at `at` (between the previous tick and this one)."""
        pc = prev.counters
        self._running = _Running(
            start_tick=x.tick, start_t=at, kind=kind, buffers_before=pc["buffers"],
            write_ms_before=pc["write_ms"], sync_ms_before=pc["sync_ms"],
            wal_at_start=x.wal_pos, estimate=prev.dirty_buffers if prev.dirty_buffers else None,
            source=source)
        self._last_start_t = at
        self._last["kind"] = kind
        events.append(("checkpoint_start", f"checkpoint starting: {kind}", {"kind": kind, "start_t": at}))
        return self._running

    def _end(self, x: TickInput, events, at: float) -> None:
        r = self._running
        assert r is not None, "_end() with no checkpoint running"
        r.end_tick, r.end_t = x.tick, at
        self._finishing.append(r)
        self._running = None
        log = r.log
        text = f"checkpoint complete: {r.kind}"
        if log:
            text += f", wrote {log['log_buffers']} buffers, write={log['write_s']:.3f} s, " \
                    f"sync={log['sync_s']:.3f} s, total={log['total_s']:.3f} s"
        events.append(("checkpoint_end", text, {"kind": r.kind}))

    def _settle(self, x: TickInput) -> list[dict]:
        """Emit ended checkpoints once the cumulative counters include them.

        The checkpointer publishes its counters at the end of its loop iteration, after the log
        line and pg_control: wait until write/sync time moved (or a few ticks) before taking
        the buffer count.
        """
        done = []
        for r in list(self._finishing):
            r.settle_ticks += 1
            c = x.counters
            caught_up = c["write_ms"] != r.write_ms_before or c["sync_ms"] != r.sync_ms_before
            if caught_up or r.settle_ticks > 3:
                self._finishing.remove(r)
                done.append(self._row(r, c))
        return done

    def _row(self, r: _Running, c: dict) -> dict:
        row = {"start_tick": r.start_tick, "end_tick": r.end_tick, "start_t": r.start_t, "end_t": r.end_t,
               "kind": r.kind, "buffers": c["buffers"] - r.buffers_before, "source": r.source,
               "write_s": (c["write_ms"] - r.write_ms_before) / 1000.0,
               "sync_s": (c["sync_ms"] - r.sync_ms_before) / 1000.0}
        if r.log:  # the log's own figures win where it has them
            row.update({k: v for k, v in r.log.items() if k != "what" and v is not None})
        if "buffers_pct" not in row and self.settings.shared_buffers:
            row["buffers_pct"] = 100.0 * row["buffers"] / self.settings.shared_buffers
        return row

    def _progress(self, x: TickInput, r: _Running, written: float, elapsed: float) -> float | None:
        """How far the write phase is.

        The checkpointer sleeps (CheckpointWriteDelay) only while it is on schedule, that is while
        progress * completion_target >= max(elapsed / timeout, WAL since start / trigger); so when
        it is seen sleeping (when last seen), that schedule *is* the progress. Otherwise (behind schedule, I/O bound,
        immediate) count buffers against the dirty buffers at start, which undercounts buffers
        that backends and the bgwriter wrote for it. With checkpoint_completion_target = 0 the
        checkpointer is never on schedule (it writes flat out), so there is no schedule to show.
        """
        s = self.settings
        spread = r.kind not in ("immediate", "shutdown", "end-of-recovery") and s.completion_target > 0 \
            and s.timeout_s > 0
        schedule = None
        if spread:
            by_wal = 0.0
            if r.wal_at_start is not None and x.wal_pos is not None:
                by_wal = (x.wal_pos - r.wal_at_start) / s.wal_trigger_bytes
            schedule = min(1.0, max(elapsed / s.timeout_s, by_wal) / s.completion_target)
        by_buffers = min(1.0, written / r.estimate) if r.estimate else None
        if schedule is not None and (self._seen_wait == "checkpointwritedelay" or by_buffers is None):
            return schedule
        return by_buffers

    def _values(self, x: TickInput) -> dict:
        s = self.settings
        r = self._running
        active = r is not None or any(f.end_tick == x.tick for f in self._finishing)
        shown = r or next((f for f in self._finishing if f.end_tick == x.tick), None)
        vals = {M.CHECKPOINT_ACTIVE: 1 if active else 0, M.CHECKPOINT_KIND: self._last["kind"],
                M.CHECKPOINT_BUFFERS_WRITTEN: None, M.CHECKPOINT_BUFFERS_ESTIMATE: None,
                M.CHECKPOINT_PROGRESS: None, M.CHECKPOINT_ELAPSED_S: None,
                # The settings in force at this tick: views read these, never a copy from the start.
                M.CHECKPOINT_TIMEOUT_S: s.timeout_s, M.CHECKPOINT_COMPLETION_TARGET: s.completion_target}
        if shown is not None:
            written = x.counters["buffers"] - shown.buffers_before
            elapsed = x.t - shown.start_t
            vals.update({M.CHECKPOINT_BUFFERS_WRITTEN: written, M.CHECKPOINT_ELAPSED_S: elapsed,
                         M.CHECKPOINT_BUFFERS_ESTIMATE: shown.estimate})
            vals[M.CHECKPOINT_PROGRESS] = 1.0 if shown is not r else self._progress(x, r, written, elapsed)
        if self._last_start_t is not None:
            vals[M.CHECKPOINT_TIME_PROGRESS] = max(0.0, min(1.0, (x.t - self._last_start_t) / s.timeout_s))
        else:
            vals[M.CHECKPOINT_TIME_PROGRESS] = None
        # While running, the WAL trigger counts from the new redo point (about where WAL was at start).
        redo = r.wal_at_start if r is not None else lsn_to_int(x.redo_lsn)
        vals[M.CHECKPOINT_WAL_PROGRESS] = (
            max(0.0, min(1.0, (x.wal_pos - redo) / s.wal_trigger_bytes))
            if redo is not None and x.wal_pos is not None else None)
        return vals
