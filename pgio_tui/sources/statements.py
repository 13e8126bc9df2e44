"""Top statements from pg_stat_statements: what to read each tick, and per-queryid window figures.

Reading pg_stat_statements costs the server time in proportion to its entries (every entry is
copied out, ~1-3 us each: 5,000 entries cost milliseconds), so the observer does not read it
every tick regardless. `StatementSchedule` picks, tick by tick, the cheapest read that keeps
the whole tick within a budget measured on the server itself (TICK_BUDGET_MS: the reads get what
the rest of the tick leaves): the sums (for the all-statement latency) as often as they fit (every
tick while they are cheap), every entry's counters (for the top statements) at most every
STATEMENT_WINDOW_S.
`StatementTracker` turns two reads of every entry into per-queryid figures over the window between
them, picks the top rows by time and by each I/O figure, and asks for the text of a queryid once.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from operator import itemgetter
from typing import Any

from pgio_tui.frame import STATEMENT_FIELDS
from pgio_tui.secrets import scrub_statement
from pgio_tui.sources.statements_sql import STATEMENT_COUNTERS

STATEMENT_WINDOW_S = 10.0  # shortest window of the per-statement figures (file size: 5 s was 22 % of it; server cost)
STATEMENTS_TOP = 20  # statements kept per window
MAX_STRIDE_S = 60.0  # read at least this often while the budget allows (see StatementSchedule._due)
TEXT_EVERY_S = 30.0  # texts asked for before and not found are asked again this often (pg_stat_statements(true) reads a file)
TEXT_NEW_S = 2.0  # texts of queryids never asked for are read this soon (a recording must not end without them)
TEXTS_MAX = 200  # query texts asked for at once

NONE, SUMS, ROWS = 0, 1, 2  # bit flags of the query; a read of every entry (ROWS) gives the sums too
# Mean server ms per tick of the whole tick statement (the target is 1 ms; a tenth kept for noise).
# The pg_stat_statements reads earn what the rest of the tick (its mean cost) leaves, split by
# READ_SHARE, and at least MIN_READS_MS when the rest takes it all (a thousand backends): rarer
# reads, never none.
TICK_BUDGET_MS = 0.9
READ_SHARE = {SUMS: 0.4, ROWS: 0.6}
MIN_READS_MS = 0.15
# The rest of the tick is the mean of the last BASE_TICKS ticks (enough to hold several strides of
# the processes' read: every k-th tick is dearer, and a median would not see it), each counted at
# most BASE_CAP times their median: a tick the machine descheduled does not starve the reads.
BASE_TICKS = 30
BASE_CAP = 4.0

# Sort keys of the top-N pick, in turn: time, then each I/O figure (a statement that only writes
# WAL or only dirties buffers still shows).
TOP_KEYS = ("time_ms_s", "read_s", "dirtied_s", "written_s", "wal_bytes_s", "read_time_ms_s",
            "write_time_ms_s", "temp_written_s")

_COUNTERS = tuple(STATEMENT_COUNTERS)  # calls, total_ms, sumsq, rows, hit, read, ...
# STATEMENT_FIELDS rate -> its cumulative counter
_RATES = {"calls_s": "calls", "time_ms_s": "total_ms", "rows_s": "rows", "hit_s": "hit", "read_s": "read",
          "dirtied_s": "dirtied", "written_s": "written", "read_time_ms_s": "read_time",
          "write_time_ms_s": "write_time", "temp_written_s": "temp_written", "wal_bytes_s": "wal_bytes"}
assert set(_RATES) | {"mean_ms", "stddev_ms"} == set(STATEMENT_FIELDS)


def rest_ms(ticks) -> float:
    """What the rest of a tick costs on average: the mean of `ticks` (server ms), each counted at
    most BASE_CAP times their median. A periodic dearer tick (pg_stat_activity every k-th) counts
    in full; an odd one (the machine descheduled the backend) only up to the cap."""
    cap = BASE_CAP * statistics.median(ticks)
    return statistics.fmean(min(t, cap) for t in ticks)


class StatementSchedule:
    """Which pg_stat_statements reads a tick makes, so that the tick costs the server at most
    TICK_BUDGET_MS on average.

    Each kind of read has an account that earns its share of the budget every tick (what the rest
    of the tick, `base_ms` of the last ticks (rest_ms), leaves of TICK_BUDGET_MS) and pays what
    each read really cost (measured on the server); a read happens when the account covers its
    expected cost (a smoothed average of the last ones). The long-run mean stays within the budget even when the
    costs drift; the first read of every entry (the baseline) is not charged. A read of every
    entry gives the sums from the same scan, so a tick reads one or the other; cheap sums are
    read every tick.
    """

    def __init__(self, interval: float, enabled: bool = True):
        self.interval = interval
        self.enabled = enabled
        self.cost_ms = {SUMS: 0.0, ROWS: 0.0}  # smoothed server ms of one read of each kind
        self.balance = {SUMS: 0.0, ROWS: 0.0}  # budget earned and not spent, ms
        self._last = {SUMS: -10**9, ROWS: -10**9}  # tick of the last read of each kind (ROWS also sums)
        self._last_text = -10**9
        self._earned_to: int | None = None
        self._base: deque[float] = deque(maxlen=BASE_TICKS)  # server ms of the rest of the last ticks
        self.base_ms: float | None = None  # their mean, each at most BASE_CAP x their median (rest_ms)

    def budget_ms(self, kind: int) -> float:
        """What a kind of read earns per tick: its share of what the rest of the tick leaves."""
        return READ_SHARE[kind] * max(MIN_READS_MS, TICK_BUDGET_MS - (self.base_ms or 0.0))

    def _floor(self, kind: int) -> int:
        return math.ceil(STATEMENT_WINDOW_S / self.interval - 1e-9) if kind == ROWS else 1

    def _cap(self) -> int:
        return max(1, math.ceil(MAX_STRIDE_S / self.interval))

    def _earn(self, tick: int) -> None:
        if self._earned_to is not None and tick > self._earned_to:
            for kind in self.balance:  # at most one long stride's worth is kept
                budget = self.budget_ms(kind)
                self.balance[kind] = min(self.balance[kind] + budget * (tick - self._earned_to),
                                         budget * self._cap())
        self._earned_to = tick if self._earned_to is None else max(tick, self._earned_to)

    def _due(self, kind: int, tick: int) -> bool:
        """Due when the account covers the expected cost, or after MAX_STRIDE_S when it is not in
        debt (a read dearer than MAX_STRIDE_S of budget then waits until it is paid off)."""
        since = tick - (self._last[ROWS] if kind == ROWS else max(self._last[SUMS], self._last[ROWS]))
        if since < self._floor(kind):
            return False
        return self.balance[kind] >= self.cost_ms[kind] or (since >= self._cap() and self.balance[kind] >= 0)

    def kind(self, tick: int) -> int:
        """The read of this tick: NONE, SUMS or ROWS (which gives the sums too)."""
        if not self.enabled:
            return NONE
        self._earn(tick)
        return ROWS if self._due(ROWS, tick) else SUMS if self._due(SUMS, tick) else NONE

    def texts_due(self, tick: int, fresh: bool) -> bool:
        """Read query texts this tick? `fresh`: some wanted queryid was never asked for."""
        since = (tick - self._last_text) * self.interval
        return since >= TEXT_EVERY_S or (fresh and since >= TEXT_NEW_S - 1e-9)

    def done(self, tick: int, kinds: int, ms: dict[int, float | None], texts: bool = False,
             base_ms: float | None = None) -> None:
        """A tick read `kinds` (and texts when `texts`); `ms` is what each part took on the server
        (None: not charged). Texts come with the rows part: their account pays, and a read with
        texts does not change the usual cost of a rows read. `base_ms`: the server ms of the rest
        of this tick (None: unknown), which sets what the reads earn from the next tick on."""
        if base_ms is not None and base_ms >= 0:
            self._base.append(base_ms)
            self.base_ms = rest_ms(self._base)
        if texts:
            self._last_text = tick
        for kind in (SUMS, ROWS):
            cost = ms.get(kind)
            cost = None if cost is None or cost < 0 else cost
            if not kinds & kind:
                if kind == ROWS and texts and cost is not None:
                    self.balance[ROWS] -= cost
                continue
            self._last[kind] = tick
            if cost is None:
                continue
            self.balance[kind] -= cost
            if not (texts and kind == ROWS):
                old = self.cost_ms[kind]
                self.cost_ms[kind] = cost if old == 0 else 0.7 * old + 0.3 * cost

    def reset(self) -> None:
        """A new connection: the next tick reads again at once."""
        self._last = {SUMS: -10**9, ROWS: -10**9}


class StatementTracker:
    """Every entry's counters as of the last read, per-queryid figures over the window between two
    reads, and the texts of the top queryids (asked for once)."""

    def __init__(self, top: int = STATEMENTS_TOP):
        self.top = top
        self._entries: dict[tuple, list] = {}  # (queryid, userid, dbid, toplevel) -> counters
        self._baseline = True  # the next read only learns the entries
        self._filtered = False  # the last known() sent entries: that read returns changes only
        self.texts: dict[int, str] = {}  # queryid -> text, every one learned
        self._wanted: set[int] = set()  # top queryids still without text
        self._asked: dict[int, int] = {}  # queryid -> times asked (a vanished entry stops being asked)
        self._reset_t: float | None = None  # pg_stat_statements_info.stats_reset as last read (14+)

    def reset(self) -> None:
        """Counters start over (reconnect, server restart): the next read is a new baseline."""
        self._entries = {}
        self._baseline = True

    @property
    def baseline(self) -> bool:
        """The next read learns every entry (the first, or the first after a reset)."""
        return self._baseline

    def known(self) -> dict[str, list]:
        """The query parameters that tell the server what we know, so it returns changes only."""
        keys = list(self._entries)
        self._filtered = bool(keys)
        return {"pq": [k[0] for k in keys], "pu": [k[1] for k in keys], "pd": [k[2] for k in keys],
                "pt": [k[3] for k in keys], "pc": [self._entries[k][0] for k in keys]}

    def sums(self) -> dict[str, float]:
        """All-statement sums, as a read of the sums returns them (for the latency figures)."""
        calls = total = sumsq = 0.0
        for c in self._entries.values():
            calls += c[0] or 0
            total += c[1] or 0
            sumsq += c[2] or 0
        return {"calls": calls, "total_ms": total, "sumsq": sumsq, "entries": len(self._entries)}

    def update(self, rows: list[list] | None, window_s: float | None,
               reset_t: float | None = None) -> list[dict[str, Any]]:
        """Apply a read of the changed entries; the top statements over the window since the
        previous read (none for the first read, which is the baseline). `reset_t`: when every
        entry was last reset (14+): a new time makes this read a new baseline, since counters that
        started over and passed their old values cannot be told from counters that went on."""
        if self._baseline and self._filtered:  # reset after a read of changes only: read everything again
            self._entries, self._filtered = {}, False
            return []
        if reset_t is not None and self._reset_t is not None and reset_t != self._reset_t:
            self._baseline = True
        if reset_t is not None:
            self._reset_t = reset_t
        per_query: dict[int, list[float | None]] = {}
        for r in rows or ():
            key, vals = (r[0], r[1], r[2], r[3]), r[4:]
            if r[0] is None:
                continue
            if vals[0] is None:  # vanished: evicted or reset
                self._entries.pop(key, None)
                continue
            old = self._entries.get(key)
            self._entries[key] = vals
            if old is not None and (vals[0] or 0) < (old[0] or 0):
                old = None  # evicted and created again: its counters started from zero
            if old is not None and vals[0] == old[0]:
                continue
            delta = [None if v is None else v - (0 if old is None or o is None else o)
                     for v, o in zip(vals, old if old is not None else [None] * len(vals))]
            acc = per_query.get(r[0])
            per_query[r[0]] = delta if acc is None else [
                None if a is None or d is None else a + d for a, d in zip(acc, delta)]
        if self._baseline or not window_s:
            self._baseline = False
            return []
        stats = [self._figures(q, d, window_s) for q, d in per_query.items() if (d[0] or 0) > 0]
        picked = self._pick(stats)
        self._wanted.update(s["queryid"] for s in picked if s["queryid"] not in self.texts)
        return picked

    @staticmethod
    def _figures(queryid: int, d: list[float | None], window_s: float) -> dict[str, Any]:
        c = dict(zip(_COUNTERS, d))
        calls = c["calls"]
        assert calls, "only statements called in the window have figures"
        out: dict[str, Any] = {"queryid": queryid}
        for rate, counter in _RATES.items():
            v = c[counter]
            out[rate] = None if v is None else max(0.0, v) / window_s
        mean = (c["total_ms"] or 0.0) / calls
        out["mean_ms"] = mean
        var = (c["sumsq"] / calls - mean * mean) if c["sumsq"] is not None else None
        out["stddev_ms"] = None if var is None else math.sqrt(max(0.0, var))
        return out

    def _pick(self, stats: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Up to `top` statements: the next best by each key in turn (time, reads, dirtied, ...)."""
        ranked = [sorted((s for s in stats if (s.get(k) or 0) > 0), key=itemgetter(k), reverse=True) for k in TOP_KEYS]
        picked: dict[int, dict[str, Any]] = {}
        pos = [0] * len(ranked)
        while len(picked) < self.top and any(p < len(r) for p, r in zip(pos, ranked)):
            for i, r in enumerate(ranked):
                while pos[i] < len(r) and r[pos[i]]["queryid"] in picked:
                    pos[i] += 1
                if pos[i] < len(r) and len(picked) < self.top:
                    picked[r[pos[i]]["queryid"]] = r[pos[i]]
                    pos[i] += 1
        return sorted(picked.values(), key=lambda s: -(s["time_ms_s"] or 0))

    def want_texts(self, queryids) -> None:
        """Ask for the texts of these queryids too (the statements the busiest backends run)."""
        self._wanted.update(q for q in queryids if q not in self.texts)

    def fresh_wanted(self) -> bool:
        """Some queryid's text is wanted and was never asked for."""
        return any(q not in self._asked for q in self._wanted)

    def wanted_texts(self) -> list[int]:
        """Queryids to read the text of (each asked at most 3 times)."""
        return sorted(q for q in self._wanted if self._asked.get(q, 0) < 3)[:TEXTS_MAX]

    def got_texts(self, asked: list[int], texts: dict | None) -> dict[int, str]:
        """Texts from a read (JSON keys are strings); returns the ones new to us."""
        new: dict[int, str] = {}
        for k, text in (texts or {}).items():
            q = int(k)
            if q not in self.texts and isinstance(text, str):
                self.texts[q] = new[q] = scrub_statement(text)  # where a text comes in: no password kept
        for q in asked:
            self._asked[q] = self._asked.get(q, 0) + 1
            if q in self.texts or self._asked[q] >= 3:
                self._wanted.discard(q)
        return new
