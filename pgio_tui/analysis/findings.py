"""Findings: what a recording says happened and why, each with the evidence it rests on.

A rule (`RULES`) is a question about the recording, the metrics it reads, the test it applies, the
evidence it attaches and the suggestion it makes; each is written from the PostgreSQL and Linux
facts in docs/findings.md. Every threshold is in `THRESHOLDS`, with the reason for it. A rule says
nothing without its evidence, and nothing on a quiet run: each has a floor of activity below which
the question does not arise. A finding is a reading of the figures, never a proof of cause.
"""

from __future__ import annotations

import math
import statistics
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.analysis.align import CHUNK_TICKS, FloatColumn, Window, aligned_columns, window
from pgio_tui.analysis.own_io import SHARED_BELOW_PCT, own_io_shares
from pgio_tui.analysis.summary import checkpoints_in, device_labels, role_devices
from pgio_tui.format import number
from pgio_tui.frame import BLOCK_KB  # 8 kB unless built otherwise (the recording's block_size says)
from pgio_tui.sources.backends import AUTOVACUUM_QUERY
from pgio_tui.store.reader import Recording
from pgio_tui.store.timeline import Timeline, open_recording

_ANY_DEVICE = "<device>"  # a rule's metric list names per-device metrics for any device


@dataclass(frozen=True, slots=True)
class Threshold:
    value: float
    unit: str
    why: str


THRESHOLDS: dict[str, Threshold] = {
    "backend_share_pct": Threshold(
        20, "%", "the bgwriter and the checkpointer exist so that a backend rarely writes a buffer itself; "
        "when backends (and autovacuum) write a fifth of all buffers, the writes sit on the query path"),
    "backend_min_buffers": Threshold(
        1000, "buffers", "under 8 MiB written by backends over a run the cost is too small to act on"),
    "wal_share_pct": Threshold(
        50, "%", "most checkpoints started because max_wal_size was reached, not on checkpoint_timeout"),
    "wal_min_checkpoints": Threshold(
        2, "checkpoints", "one WAL checkpoint can be a one-off (a bulk load, pgbench -i); two are a pattern"),
    "write_phase_over": Threshold(
        1.1, "x", "the write phase is paced to end at checkpoint_timeout x checkpoint_completion_target; 10 % "
        "over it is the checkpointer behind its schedule, not jitter"),
    "sync_phase_s": Threshold(
        10, "s", "the sync phase fsyncs what the kernel has not yet written; ten seconds of it is a device "
        "draining a backlog while commits wait behind it"),
    "latency_window_s": Threshold(5, "s", "long enough to hold a p99 of a busy run, short enough to place a spike"),
    "latency_rise_x": Threshold(
        3, "x", "a window's p99 three times the run's typical (median) window p99 is a spike, not noise "
        "(two identical runs here moved by 11-22 %)"),
    "latency_min_txns": Threshold(
        100, "transactions", "a p99 needs 100 transactions in the window to have one above it"),
    "writeback_kb": Threshold(
        32768, "kB", "32 MiB in Writeback is the kernel flushing in bulk: reads and fsyncs queue behind it"),
    "correlation_r": Threshold(
        0.5, "r", "a Pearson r of 0.5 between Writeback and p99 over the run: they move together more often "
        "than not (a correlation, not a cause)"),
    "correlation_max_lag_s": Threshold(
        5, "s", "latency follows a writeback burst within seconds, not minutes (a rate-limited client's "
        "transactions queued behind a stall finish late, after it)"),
    "device_util_pct": Threshold(
        90, "%", "the device had I/O in flight nearly all the time (on SSD/NVMe that alone is not saturation)"),
    "device_await_rise_x": Threshold(
        2, "x", "writes took twice as long during checkpoints as between them: requests queued"),
    "device_min_ticks": Threshold(3, "ticks", "fewer ticks than this on either side make a comparison of one moment"),
    "turnover_x": Threshold(
        1, "x shared_buffers", "until the run has allocated (16+: evicted) as many buffers as shared_buffers "
        "holds, its reads may be the cache filling after a start, not a read set that does not fit"),
    "reads_min_s": Threshold(
        100, "blocks/s", "under 100 blocks (0.8 MiB) read per second the reads cost too little to act on"),
    "hit_ratio_pct": Threshold(
        90, "%", "under 90 % of block accesses found in shared_buffers, most reads leave PostgreSQL's cache"),
    "disk_read_share_pct": Threshold(
        50, "%", "when half the blocks PostgreSQL read came from the device, the page cache does not hold them "
        "either"),
}


def th(name: str) -> float:
    return THRESHOLDS[name].value


@dataclass(slots=True)
class Finding:
    """One thing the recording shows: the rule that found it, its text, and what it rests on."""

    id: str
    text: str
    strength: str  # "strong" (the figure is twice past its threshold or more), "moderate", "weak"
    metrics: list[str]  # the recorded metric keys it reads
    figures: dict[str, dict[str, Any]]  # name -> {"value", "unit"}: the evidence
    windows: list[tuple[float, float]] = field(default_factory=list)  # (from, to) s from the window's origin
    suggestion: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "strength": self.strength, "metrics": self.metrics,
                "figures": self.figures, "windows": [{"from_s": a, "to_s": b} for a, b in self.windows],
                "suggestion": self.suggestion}

    def figure(self, name: str) -> float | None:
        f = self.figures.get(name)
        return None if f is None else f["value"]


def strength(measure: float, threshold: float) -> str:
    """How far past its threshold the rule's figure went (either direction: ratios of the two)."""
    if threshold <= 0 or measure <= 0:
        return "moderate"
    r = max(measure / threshold, threshold / measure)
    return "strong" if r >= 2 else "moderate"


def fig(value: float | None, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


class Scope:
    """A recording's window as the rules read it: its per-tick columns, finished checkpoints and settings.
    The recording is a file or a folder of rotated ones (a Timeline): the rules read only what both give."""

    def __init__(self, rec: Recording | Timeline, win: Window):
        self.rec, self.win = rec, win
        self.roles = {role: devs[0] for role, devs in role_devices(rec).items()}
        disk = [M.disk(dev, f) for dev in dict.fromkeys(self.roles.values())
                for f in (M.DISK_UTIL_PCT, M.DISK_W_AWAIT_MS, M.DISK_AQU_SZ, M.DISK_RKB_S)]
        wanted = [M.writes(s) for s in M.WRITE_SOURCES] + [
            M.BGWRITER_MAXWRITTEN_S, M.CHECKPOINT_ACTIVE, M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB, M.MEM_DIRTY_THRESHOLD_KB,
            M.LATENCY_P99_MS, M.LATENCY_TXNS, M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.BUFFERS_EVICTIONS_S, M.WAL_BYTES_S,
            M.WRITES_AUTOVACUUM, M.BUFFERS_ALLOC_S, M.CHECKPOINT_ELAPSED_S]
        known = [m for m in dict.fromkeys(wanted + disk) if rec.knows(m)]
        c = aligned_columns(rec, win, known, compact=True)  # a week's columns in 8 bytes a value
        self.cols = c.values
        # read-only sequences like the lists, in 8 bytes a tick each
        self.x, self.tick_ids, self.t = array("d", c.x), array("q", c.ticks), array("d", c.t)
        # The sampler's own dt (its monotonic clock): rate x dt gives back the tick's count exactly.
        self.dt: list[float] = []
        for k in range(0, len(self.tick_ids), CHUNK_TICKS):  # a span at a time: a week's dict of them is ~70 MB
            ids = self.tick_ids[k:k + CHUNK_TICKS]
            dts = rec.tick_dts(ids[0], ids[-1])
            self.dt += [d if isinstance(d := dts.get(tick), (int, float)) and math.isfinite(d) and d > 0 else a
                        for tick, a in zip(ids, c.dt[k:k + CHUNK_TICKS])]
        self.checkpoints = checkpoints_in(rec.checkpoints(), win)
        self.settings = {k: s.value for k, s in rec.settings(win.start_tick).items()}
        self._latency: list[tuple[float, float, float, int]] | None = None

    def col(self, metric: str) -> list:
        c = self.cols.get(metric)
        return c.tolist() if isinstance(c, FloatColumn) else c or [None] * len(self.x)

    def _each(self, metric: str) -> Iterable:
        """The metric's values one by one (None where missing), without making a week's list of them."""
        return self.cols.get(metric) or [None] * len(self.x)

    def has(self, metric: str) -> bool:
        return any(v is not None for v in self._each(metric))

    def total(self, metric: str) -> float:
        """Σ rate × dt over the window: the count of a per-second rate."""
        return sum((v or 0.0) * dt for v, dt in zip(self._each(metric), self.dt))

    def seconds(self) -> float:
        return sum(self.dt)

    def setting(self, name: str) -> float | int | None:
        """A numeric setting in its pg_settings unit (a whole number as an int, for printing)."""
        try:
            v = float(self.settings[name])
        except (KeyError, TypeError, ValueError):
            return None
        return int(v) if v.is_integer() else v if math.isfinite(v) else None

    def shared_buffers(self) -> int | None:
        """shared_buffers in buffers (pg_settings gives it in 8kB units)."""
        unit = self.rec.settings(self.win.start_tick).get("shared_buffers")
        v = self.setting("shared_buffers")
        return int(v) if v is not None and unit is not None and unit.unit == "8kB" else None

    def latency_windows(self) -> list[tuple[float, float, float, int]]:
        """(from x, to x, p99 ms, transactions) of each LATENCY_WINDOW_S window of the launched
        workload's transactions (the recording's histograms: a p99 of transactions, never of ticks)."""
        if self._latency is None:
            self._latency = []
            ids, ts = self.tick_ids, self.t
            step = th("latency_window_s")
            i = 0
            while i < len(ids):
                j = i
                while j + 1 < len(ids) and ts[j + 1] - ts[i] < step:
                    j += 1
                hist = self.rec.latency_histogram(ids[i], ids[j])
                p99 = hist.percentile(99) if hist.count else None
                if p99 is not None:
                    start = max(0.0, ts[i] - self.win.origin_t - self.dt[i])  # the first tick's rates began here
                    self._latency.append((start, ts[j] - self.win.origin_t, p99, hist.count))
                i = j + 1
        return self._latency

    def tick_range(self, a: float, b: float) -> list[int]:
        """Indexes of the ticks whose interval lies within x in (a, b]."""
        return [i for i, x in enumerate(self.x) if a < x <= b + 1e-6]


# --- the rules ----------------------------------------------------------------------------------

def backend_writes(s: Scope) -> list[Finding]:
    present = [src for src in M.WRITE_SOURCES if s.has(M.writes(src))]
    if M.WRITES_BACKEND not in [M.writes(p) for p in present]:
        return []
    totals = {src: s.total(M.writes(src)) for src in present}
    all_ = sum(totals.values())
    by_backends = totals.get("backend", 0.0) + totals.get("autovacuum", 0.0)
    if all_ <= 0 or by_backends < th("backend_min_buffers"):
        return []
    share = 100 * by_backends / all_
    if share < th("backend_share_pct"):
        return []
    stops = s.total(M.BGWRITER_MAXWRITTEN_S)
    maxpages = s.setting("bgwriter_lru_maxpages")
    figures = {"backend and autovacuum writes": fig(round(by_backends), "buffers"),
               "all writes": fig(round(all_), "buffers"), "backend share": fig(share, "%"),
               **{f"{src} writes": fig(round(v), "buffers") for src, v in totals.items()},
               "bgwriter stops at bgwriter_lru_maxpages": fig(round(stops), "stops"),
               "bgwriter_lru_maxpages": fig(maxpages, "pages")}
    who = "backends and autovacuum" if totals.get("autovacuum") else "backends"
    text = (f"{who} wrote {shown(share, '%')} % of the buffers written ({shown(round(by_backends), 'buffers')} "
            f"of {shown(round(all_), 'buffers')})")
    if maxpages == 0:
        text += "; bgwriter_lru_maxpages is 0: the background writer is off"
        suggestion = "set bgwriter_lru_maxpages above 0 (default 100) so the background writer cleans buffers ahead"
    elif stops >= 1:
        text += (f" while the background writer stopped {shown(round(stops), 'buffers')} times at its limit "
                 f"(bgwriter_lru_maxpages {shown(maxpages)})")
        suggestion = "raise bgwriter_lru_maxpages (and lower bgwriter_delay) so the background writer keeps ahead"
    else:  # the bgwriter kept up with what it is asked: most likely writes it can never take over
        text += ("; the background writer never reached its page limit, so it did not hold them back: backends "
                 "write their own buffers in bulk operations' rings (COPY, INSERT ... SELECT, VACUUM) and when "
                 "they extend a relation")
        suggestion = ("for a bulk load this is expected; otherwise raise bgwriter_lru_multiplier so the background "
                      "writer cleans further ahead, or shared_buffers if the working set does not fit")
    version = s.rec.meta.get("server_version_num")
    if isinstance(version, (int, float)) and version < 160000:  # before 16: buffers_backend
        text += " (before PostgreSQL 16 this count includes relation extensions, which the bgwriter cannot take over)"
    sure = strength(share, th("backend_share_pct")) if maxpages == 0 or stops >= 1 else "weak"
    return [Finding("backend_writes", text, sure,
                    [M.writes(p) for p in present] + [M.BGWRITER_MAXWRITTEN_S], figures,
                    [(0.0, s.win.length)], suggestion)]


def wal_checkpoints(s: Scope) -> list[Finding]:
    cps = s.checkpoints
    wal = [c for c in cps if c.get("kind") == "wal"]
    if len(wal) < th("wal_min_checkpoints"):
        return []
    share = 100 * len(wal) / len(cps)
    if share < th("wal_share_pct"):
        return []
    starts = sorted(c["start_t"] for c in wal if c.get("start_t") is not None)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    every = statistics.median(gaps) if gaps else None
    timeout, max_wal = s.setting("checkpoint_timeout"), s.setting("max_wal_size")
    wal_rate = s.total(M.WAL_BYTES_S) / 2**20 / s.seconds() if s.has(M.WAL_BYTES_S) and s.seconds() else None
    cct = s.setting("checkpoint_completion_target") or 0.9
    figures = {"checkpoints": fig(len(cps), "checkpoints"), "requested by WAL": fig(len(wal), "checkpoints"),
               "WAL share": fig(share, "%"), "median interval between WAL checkpoints": fig(every, "s"),
               "checkpoint_timeout": fig(timeout, "s"), "max_wal_size": fig(max_wal, "MB"),
               "WAL rate": fig(wal_rate, "MiB/s")}
    text = (f"{len(wal)} of {len(cps)} checkpoints ({shown(share, '%')} %) were requested by WAL: max_wal_size "
            f"({shown(max_wal)} MB) was reached")
    if every is not None:
        text += f" every {shown(every, 's')} s"
    if timeout is not None:
        text += f", before checkpoint_timeout ({shown(timeout, 's')} s)"
    suggestion = "raise max_wal_size"
    if wal_rate and timeout:
        need = wal_rate * timeout * (1 + cct)
        figures["max_wal_size for timed checkpoints"] = fig(need, "MB")
        suggestion += (f" to about {shown(need)} MB (the WAL rate x checkpoint_timeout x (1 + "
                       f"checkpoint_completion_target)) so checkpoints start on time")
    windows = [(c["start_t"] - s.win.origin_t, c["end_t"] - s.win.origin_t) for c in wal
               if c.get("start_t") is not None and c.get("end_t") is not None]
    return [Finding("wal_checkpoints", text, strength(share, th("wal_share_pct")), [M.CHECKPOINT_KIND, M.WAL_BYTES_S],
                    figures, windows, suggestion)]


def checkpoint_phases(s: Scope) -> list[Finding]:
    timeout, cct = s.setting("checkpoint_timeout"), s.setting("checkpoint_completion_target")
    out = []
    data = s.roles.get("PGDATA")
    if timeout and cct:  # 0: the checkpointer writes flat out, on no schedule to outrun (as immediate ones)
        target = timeout * cct
        slow = [c for c in s.checkpoints if c.get("write_s") is not None
                and c.get("kind") not in ("immediate", "shutdown")  # not paced: written at full speed
                and c["write_s"] > target * th("write_phase_over")]
        if slow:
            worst = max(slow, key=lambda c: c["write_s"])
            out.append(Finding(
                "checkpoint_write_phase",
                f"{len(slow)} checkpoint(s) took longer to write than checkpoint_timeout x "
                f"checkpoint_completion_target "
                f"({shown(target, 's')} s): the longest wrote {shown(worst.get('buffers'), 'buffers')} buffers in "
                f"{shown(worst['write_s'], 's')} s" + (f" to {data}" if data else ""),
                strength(worst["write_s"], target * th("write_phase_over")), [M.CHECKPOINT_ACTIVE],
                {"checkpoints over target": fig(len(slow), "checkpoints"),
                 "longest write phase": fig(worst["write_s"], "s"),
                 "target": fig(target, "s"), "buffers": fig(worst.get("buffers"), "buffers")},
                [(c["start_t"] - s.win.origin_t, c["end_t"] - s.win.origin_t) for c in slow
                 if c.get("start_t") is not None and c.get("end_t") is not None],
                "the device cannot write the checkpoint's buffers in the time given: a faster device, or a lower "
                "checkpoint_completion_target leaves room for the sync phase"))
    slow = [c for c in s.checkpoints if (c.get("sync_s") or 0) > th("sync_phase_s")]
    if slow:
        worst = max(slow, key=lambda c: c["sync_s"])
        out.append(Finding(
            "checkpoint_sync_phase",
            f"{len(slow)} checkpoint(s) spent over {shown(th('sync_phase_s'), 's')} s in the sync phase: the longest "
            f"{shown(worst['sync_s'], 's')} s" + (f" fsyncing files on {data}" if data else ""),
            strength(worst["sync_s"], th("sync_phase_s")), [M.CHECKPOINT_ACTIVE],
            {"checkpoints over": fig(len(slow), "checkpoints"), "longest sync phase": fig(worst["sync_s"], "s")},
            [(c["start_t"] - s.win.origin_t, c["end_t"] - s.win.origin_t) for c in slow
             if c.get("start_t") is not None and c.get("end_t") is not None],
            "the kernel held too much dirty data at the sync: lower vm.dirty_background_bytes, or keep "
            "checkpoint_flush_after on so the checkpoint's writes reach the device as they go"))
    return out


def pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def lagged_correlation(s: Scope) -> tuple[float | None, int]:
    """(best r, lag in ticks) of Writeback against the per-tick p99, latency lagging by 0..max lag."""
    wb, p99 = s.col(M.MEM_WRITEBACK_KB), s.col(M.LATENCY_P99_MS)
    interval = float(s.rec.meta.get("interval_s") or 1.0)
    best: tuple[float | None, int] = (None, 0)
    for lag in range(int(th("correlation_max_lag_s") / interval) + 1):
        pairs = [(a, b) for a, b in zip(wb, p99[lag:]) if a is not None and b is not None]
        r = pearson([a for a, _ in pairs], [b for _, b in pairs])
        if r is not None and (best[0] is None or r > best[0]):
            best = (r, lag)
    return best


def spikes(s: Scope) -> tuple[list[tuple[float, float, float, int]], float | None]:
    """The latency windows whose p99 rose LATENCY_RISE_X times the median window's, and that median."""
    wins = [w for w in s.latency_windows() if w[3] >= th("latency_min_txns")]
    if len(wins) < 3:
        return [], None
    typical = statistics.median(w[2] for w in wins)
    return [w for w in wins if typical > 0 and w[2] >= th("latency_rise_x") * typical], typical


def latency_writeback(s: Scope) -> list[Finding]:
    found, typical = spikes(s)
    if not found or typical is None:
        return []
    dirty, wb, thr = s.col(M.MEM_DIRTY_KB), s.col(M.MEM_WRITEBACK_KB), s.col(M.MEM_DIRTY_THRESHOLD_KB)
    hits = []
    lag = th("correlation_max_lag_s")
    for a, b, p99, n in found:
        idx = s.tick_range(a - lag, b)  # the window, and the seconds before it that latency may lag by
        at_throttle = any(dirty[i] is not None and thr[i] is not None and dirty[i] >= thr[i] for i in idx)
        top_wb = max((wb[i] for i in idx if wb[i] is not None), default=0.0)
        if at_throttle or top_wb >= th("writeback_kb"):
            hits.append((a, b, p99, at_throttle, top_wb))
    if not hits:
        return []
    r, lag_ticks = lagged_correlation(s)
    worst = max(hits, key=lambda h: h[2])
    interval = float(s.rec.meta.get("interval_s") or 1.0)
    text = (f"latency p99 rose to {shown(worst[2], 'ms')} ms ({shown(worst[2] / typical)}x the run's typical "
            f"{shown(typical, 'ms')} ms) in {len(hits)} window(s) of {shown(th('latency_window_s'))} s while (or up "
            f"to {shown(lag)} s after) "
            + ("Dirty was at the kernel's throttle threshold" if worst[3]
               else f"Writeback reached {shown(worst[4] / 1024)} MiB"))
    if r is not None:
        text += (f"; over the run Writeback and p99 correlate with r = {r:.2f} "
                 f"(latency {lag_ticks * interval:g} s later; a correlation, not a proof of cause)")
    figures = {"worst window p99": fig(worst[2], "ms"), "typical window p99": fig(typical, "ms"),
               "windows": fig(len(hits), "windows"),
               "max Writeback in and before worst window": fig(worst[4], "kB"),
               "Writeback-p99 correlation": fig(r, "r"), "lag": fig(lag_ticks * interval, "s")}
    return [Finding("latency_writeback", text,
                    "strong" if r is not None and r >= th("correlation_r") else "moderate" if r and r > 0 else "weak",
                    [M.LATENCY_P99_MS, M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB, M.MEM_DIRTY_THRESHOLD_KB], figures,
                    [(a, b) for a, b, *_ in hits],
                    "lower vm.dirty_background_bytes (or _ratio) so the kernel writes earlier and in smaller "
                    "batches; keep the *_flush_after settings on")]


def checkpoint_shares(s: Scope) -> list[float]:
    """Each tick's share (0..1) of its interval (t - dt, t] during which a checkpoint ran: the tick a
    checkpoint began in counts from its start (t - checkpoint.elapsed_s), the tick it ended in up to its
    end (the checkpoints table's end_t); a tick wholly inside counts 1, a tick with none 0."""
    active, elapsed = s.col(M.CHECKPOINT_ACTIVE), s.col(M.CHECKPOINT_ELAPSED_S)
    ends = sorted(c["end_t"] for c in s.checkpoints if c.get("end_t") is not None)
    out = []
    for a, e, t, dt in zip(active, elapsed, s.t, s.dt):
        if not a:
            out.append(0.0)
            continue
        lo = t - dt
        begin = max(lo, t - e) if e is not None and e >= 0 else lo
        k = bisect_right(ends, lo)  # the first end after lo: one in (lo, t] ended in this tick
        end = ends[k] if k < len(ends) and ends[k] <= t else t
        # one ended and the next began in this tick: both parts
        inside = end - begin if end >= begin else (end - lo) + (t - begin)
        out.append(min(1.0, max(0.0, inside) / dt) if dt > 0 else 1.0)
    return out


def _in_and_out(values: list, share: list[float]) -> tuple[float | None, float | None, float, float]:
    """The means of `values` weighted by each tick's share in a checkpoint and by the rest, and the sums
    of those weights where a value is known: in one pass over a week's ticks."""
    num_in = den_in = num_out = den_out = 0.0
    for v, w in zip(values, share):
        if v is not None:
            num_in += v * w
            den_in += w
            num_out += v * (1 - w)
            den_out += 1 - w
    return num_in / den_in if den_in else None, num_out / den_out if den_out else None, den_in, den_out


def device_saturation(s: Scope) -> list[Finding]:
    """A device busy in checkpoints and not between: its figures are time-weighted by each tick's share
    in a checkpoint (checkpoint_shares), so a tick a checkpoint began late in, or the last of a
    recording cut short, does not dilute "in checkpoints" with the seconds before it."""
    share = checkpoint_shares(s)
    if not any(share):
        return []
    out = []
    for role, dev in device_labels(s.roles).items():  # a device holding PGDATA and WAL: once, "PGDATA+WAL"
        u_in, u_out, t_in, t_out = _in_and_out(s.col(M.disk(dev, M.DISK_UTIL_PCT)), share)
        if t_in < th("device_min_ticks") or t_out < th("device_min_ticks"):
            continue
        a_in, a_out, _, _ = _in_and_out(s.col(M.disk(dev, M.DISK_W_AWAIT_MS)), share)
        q_in, q_out, _, _ = _in_and_out(s.col(M.disk(dev, M.DISK_AQU_SZ)), share)
        rotational = str(s.settings.get(f"{dev}.rotational")) == "1"
        rise = a_in / a_out if a_in is not None and a_out else None
        if u_in is None or u_in < th("device_util_pct"):
            continue
        if not rotational and (rise is None or rise < th("device_await_rise_x")):
            continue  # an SSD busy all the time is not saturated unless its requests queue
        text = (f"the {role} device {dev} was saturated during checkpoints: util {shown(u_in, '%')} % "
                f"(between: {shown(u_out, '%')} %), write await {shown(a_in, 'ms')} ms (between: "
                f"{shown(a_out, 'ms')} ms), queue {shown(q_in)} (between: {shown(q_out)})")
        out.append(Finding(
            "device_saturation", text, strength(rise or u_in / th("device_util_pct"), th("device_await_rise_x")),
            [M.CHECKPOINT_ACTIVE, M.disk(dev, M.DISK_UTIL_PCT), M.disk(dev, M.DISK_W_AWAIT_MS),
             M.disk(dev, M.DISK_AQU_SZ)],
            {"util in checkpoints": fig(u_in, "%"), "util between": fig(u_out, "%"),
             "w_await in checkpoints": fig(a_in, "ms"), "w_await between": fig(a_out, "ms"),
             "queue in checkpoints": fig(q_in, "requests"), "queue between": fig(q_out, "requests"),
             "ticks in checkpoints": fig(t_in, "ticks"), "ticks between": fig(t_out, "ticks")},
            [(c["start_t"] - s.win.origin_t, c["end_t"] - s.win.origin_t) for c in s.checkpoints
             if c.get("start_t") is not None and c.get("end_t") is not None],
            "spread the checkpoint's writes (checkpoint_completion_target 0.9, a longer checkpoint_timeout)"
            + (", or put pg_wal on a device of its own" if "+" in role else "")))
    return out


def reads_do_not_fit(s: Scope) -> list[Finding]:
    if not (s.has(M.DB_BLKS_READ_S) and s.has(M.DB_BLKS_HIT_S)) or not s.seconds():
        return []
    read, hit = s.total(M.DB_BLKS_READ_S), s.total(M.DB_BLKS_HIT_S)
    rate = read / s.seconds()
    if rate < th("reads_min_s") or read + hit <= 0:
        return []
    ratio = 100 * hit / (read + hit)
    nbuf = s.shared_buffers()
    turnover = M.BUFFERS_EVICTIONS_S if s.has(M.BUFFERS_EVICTIONS_S) else M.BUFFERS_ALLOC_S
    turned = s.total(turnover)
    if ratio >= th("hit_ratio_pct") or nbuf is None or turned < th("turnover_x") * nbuf:
        return []
    figures = {"blocks read": fig(round(read), "blocks"), "blocks hit": fig(round(hit), "blocks"),
               "hit ratio": fig(ratio, "%"), "read rate": fig(rate, "blocks/s")}
    metrics = [M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, turnover]
    figures["shared_buffers"] = fig(nbuf, "buffers")
    if turnover == M.BUFFERS_ALLOC_S:
        figures["buffers allocated"] = fig(round(turned), "buffers")
    text = (f"shared_buffers does not hold the read set: {shown(ratio, '%')} % of block accesses were hits, "
            f"{shown(rate)} blocks/s read from the kernel")
    if s.has(M.BUFFERS_EVICTIONS_S):
        ev = s.total(M.BUFFERS_EVICTIONS_S)
        figures["evictions"] = fig(round(ev), "buffers")
        text += f", {shown(round(ev), 'buffers')} buffers evicted"
    suggestion = "raise shared_buffers if memory allows"
    data = s.roles.get("PGDATA")
    if data and s.has(M.disk(data, M.DISK_RKB_S)):
        from_disk = s.total(M.disk(data, M.DISK_RKB_S)) / BLOCK_KB
        share = 100 * from_disk / read
        figures[f"blocks read from {data}"] = fig(round(from_disk), "blocks")
        figures["device share of reads"] = fig(share, "%")
        metrics.append(M.disk(data, M.DISK_RKB_S))
        # The device's reads bound the server's from above: few, and the page cache served the rest.
        # Many, on a device whose reads were mostly other programs': they say nothing of the server's.
        if share < th("disk_read_share_pct"):
            text += f"; the page cache served most of them ({data} delivered {shown(share, '%')} %)"
        elif (own := own_io_shares(s.rec, s.win, {"PGDATA": data}).get("PGDATA", {}).get("read")) is not None \
                and own < SHARED_BELOW_PCT:
            figures[f"the server's share of {data}'s reads"] = fig(own, "%")
            text += (f"; {data} is shared: the server's processes read at most {shown(own, '%')} % of its bytes, "
                     "so its reads do not say whether the page cache served the server's")
        else:
            text += (f"; nor does the page cache: {data} delivered {shown(min(share, 100.0), '%')} % of those blocks "
                     f"(device reads / blocks read)")
            suggestion = ("the read set is larger than shared_buffers and the page cache: more RAM, or a smaller "
                          "read set")
    return [Finding("reads_do_not_fit", text, strength(ratio, th("hit_ratio_pct")), metrics, figures,
                    [(0.0, s.win.length)], suggestion)]


def autovacuum_spike(s: Scope) -> list[Finding]:
    found, typical = spikes(s)
    if not found or typical is None:
        return []
    seen = autovacuum_ticks(s)
    hits = [w for w in found if any(s.x[i] in seen for i in s.tick_range(w[0], w[1]))]
    if not hits:
        return []
    worst = max(hits, key=lambda w: w[2])
    said = vacuumed(s)
    return [Finding(
        "autovacuum_spike",
        f"an autovacuum worker{said} was running in {len(hits)} window(s) where latency p99 rose to "
        f"{shown(worst[2], 'ms')} ms ({shown(worst[2] / typical)}x the run's typical {shown(typical, 'ms')} ms)",
        "moderate", [M.LATENCY_P99_MS, M.WRITES_AUTOVACUUM],
        {"worst window p99": fig(worst[2], "ms"), "typical window p99": fig(typical, "ms"),
         "windows": fig(len(hits), "windows")}, [(a, b) for a, b, *_ in hits],
        "in a benchmark, VACUUM before the run (or repeat it); in production, autovacuum_vacuum_cost_delay "
        "paces it")]


def vacuumed(s: Scope) -> str:
    """What the recording says the autovacuum workers of the window did: the tables they began (the
    sampler's `autovacuum` events, the server's own words), anti-wraparound ones said so."""
    lo, hi = s.win.start_tick, s.win.end_tick
    if lo is None or hi is None:
        return ""
    told = [e.event for e in s.rec.events(["autovacuum", "note", "annotation"])
            if e.tick is not None and lo <= e.tick <= hi
            and (e.event.kind == "autovacuum" or "wraparound" in (e.event.text or ""))]
    wrap = [e.text for e in told if "wraparound" in (e.text or "")]
    tables = _user_first((m.group(2), m.group(1)) for e in told if (m := AUTOVACUUM_QUERY.match(e.text or "")))
    named = ", ".join(tables[:3]) + (f" and {len(tables) - 3} more" if len(tables) > 3 else "")
    if wrap:
        wrapped = _user_first((m.group(2), m.group(1)) for t in wrap if (m := AUTOVACUUM_QUERY.match(t)))
        return f" (anti-wraparound: {', '.join(wrapped[:3]) or 'the recording says'})"
    return f" ({named})" if named else ""


def _user_first(begun: Iterable[tuple[str, str]]) -> list[str]:
    """Distinct table names from (table, what the worker did) pairs: the users' before the system
    catalogs' (pg_catalog, pg_toast), and within each the ones VACUUMed (which write) before the ones
    only ANALYZEd (which read a sample); otherwise in the order they began."""
    vacuumed: dict[str, bool] = {}
    for table, verb in begun:
        vacuumed[table] = vacuumed.get(table, False) or verb.startswith("VACUUM")
    return sorted(vacuumed, key=lambda t: (t.startswith(("pg_catalog.", "pg_toast.", "information_schema.")),
                                           not vacuumed[t]))


def autovacuum_ticks(s: Scope) -> set[float]:
    """x of the ticks at which an autovacuum worker was seen (wait samples) or wrote (pg_stat_io)."""
    lo, hi = s.win.start_tick, s.win.end_tick
    if lo is None:
        return set()
    ticks = s.rec.ticks_with("autovacuum worker", lo, hi)
    xs = {x for x, tick in zip(s.x, s.tick_ids) if tick in ticks}
    return xs | {x for x, v in zip(s.x, s.col(M.WRITES_AUTOVACUUM)) if v}


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    question: str
    metrics: tuple[str, ...]
    test: str
    evidence: str
    suggestion: str
    run: Callable[[Scope], list[Finding]]


RULES: tuple[Rule, ...] = (
    Rule("backend_writes", "Did backends write buffers the background writer should have?",
         (M.WRITES_BACKEND, M.WRITES_AUTOVACUUM, M.BGWRITER_MAXWRITTEN_S),
         "backend+autovacuum writes >= backend_share_pct of all writes and >= backend_min_buffers",
         "writes by source, the bgwriter's stops at its limit, bgwriter_lru_maxpages",
         "bgwriter_lru_maxpages / _multiplier / bgwriter_delay", backend_writes),
    Rule("wal_checkpoints", "Were checkpoints forced by WAL rather than timed?", (M.CHECKPOINT_KIND, M.WAL_BYTES_S),
         ">= wal_min_checkpoints WAL checkpoints, >= wal_share_pct of all",
         "checkpoint kinds (server log), their interval, max_wal_size, the WAL rate",
         "max_wal_size from the WAL rate", wal_checkpoints),
    Rule("checkpoint_phases", "Did a checkpoint's write phase overrun its schedule, or its sync phase drag?",
         (M.CHECKPOINT_ACTIVE,), "write_s > timeout x cct x write_phase_over; sync_s > sync_phase_s",
         "the checkpoint's phases (server log)", "device / completion target / dirty settings", checkpoint_phases),
    Rule("latency_writeback", "Did latency spike while the kernel was writing back?",
         (M.LATENCY_P99_MS, M.MEM_DIRTY_KB, M.MEM_WRITEBACK_KB, M.MEM_DIRTY_THRESHOLD_KB),
         "a latency window's p99 >= latency_rise_x x the median window's, with Dirty >= throttle or "
         "Writeback >= writeback_kb in it or up to correlation_max_lag_s before it",
         "window p99s, Writeback, the lagged Writeback-p99 correlation",
         "vm.dirty_background_*", latency_writeback),
    Rule("device_saturation", "Was the PGDATA or WAL device saturated during checkpoints?",
         (M.CHECKPOINT_ACTIVE, M.disk(_ANY_DEVICE, M.DISK_UTIL_PCT), M.disk(_ANY_DEVICE, M.DISK_W_AWAIT_MS),
          M.disk(_ANY_DEVICE, M.DISK_AQU_SZ)),
         "util in checkpoints >= device_util_pct and (SSD) w_await >= device_await_rise_x x between",
         "util, await, queue in and between checkpoints", "spread checkpoints, separate devices", device_saturation),
    Rule("reads_do_not_fit", "Does the read set fit shared_buffers and the page cache?",
         (M.DB_BLKS_READ_S, M.DB_BLKS_HIT_S, M.BUFFERS_EVICTIONS_S, M.disk(_ANY_DEVICE, M.DISK_RKB_S)),
         "reads >= reads_min_s and hit ratio < hit_ratio_pct; device share >= disk_read_share_pct",
         "hit ratio, evictions, device reads against blocks read", "shared_buffers / RAM", reads_do_not_fit),
    Rule("autovacuum_spike", "Did an autovacuum run inside a window that moved latency?",
         (M.LATENCY_P99_MS, M.WRITES_AUTOVACUUM), "a latency spike window (as latency_writeback) with an "
         "autovacuum worker seen or writing", "window p99s, autovacuum ticks, the tables begun (anti-wraparound said)", "vacuum before, cost delay",
         autovacuum_spike),
)


def findings_of(rec: Recording | Timeline, win: Window) -> list[Finding]:
    """Every rule's findings over the window, in RULES order."""
    if win.start_tick is None:
        return []
    s = Scope(rec, win)
    return [f for rule in RULES for f in rule.run(s)]


def findings_of_file(path, align: str = "auto", win: Window | None = None) -> list[Finding]:
    """The findings of one recording file, or folder of rotated ones, over `win` (default: the window
    `align` selects)."""
    with open_recording(path) as rec:
        return findings_of(rec, win or window(rec, align))


def shown(v: float | int | None, unit: str = "") -> str:
    """A figure as printed: a count (an int) whole, anything else with the digits number() gives it."""
    return f"{v:,}" if isinstance(v, int) else number(v, unit)


def rules_markdown() -> str:
    """The rules and the thresholds table of docs/findings.md, from RULES and THRESHOLDS (a test
    keeps the doc in step: `python -m pgio_tui.analysis.findings` prints it)."""
    out = ["| rule | question | test | evidence | suggests |", "|---|---|---|---|---|"]
    out += [f"| `{r.id}` | {r.question} | {r.test} | {r.evidence} | {r.suggestion} |" for r in RULES]
    out += ["", "| threshold | value | why |", "|---|---|---|"]
    out += [f"| `{name}` | {t.value:g} {t.unit} | {t.why} |" for name, t in THRESHOLDS.items()]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(rules_markdown(), end="")
