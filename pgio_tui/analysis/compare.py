"""A versus B: the comparison object every output renders (table, markdown, CSV, JSON, the HTML
report, the TUI diff screen).

`compare(path_a, path_b, align)` opens both recordings, cuts them to windows of equal length on the
chosen alignment, summarizes each, and pairs the statistics: A, B, change % and the noise judgement
of noise.py. Nothing here draws; the TUI gets everything from a `Comparison` (its `windows` say
where each run's x = 0 is, for overlaying series with align.aligned_columns).
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pgio_tui.analysis.align import DEFAULT_ALIGN, Window, common_windows, resolve
from pgio_tui.analysis.noise import NOT_JUDGED, Judgement, judge
from pgio_tui.analysis.settings_diff import (
    SettingChange,
    changes_during,
    machine_changes,
    machine_host,
    settings_changes,
)
from pgio_tui.analysis.summary import GROUPS, Stat, Summary, summarize
from pgio_tui.store.reader import Recording

__all__ = ["Comparison", "Row", "compare", "compare_recordings"]


@dataclass(slots=True)
class Row:
    group: str
    name: str
    unit: str
    a: float | None
    b: float | None
    judgement: Judgement = NOT_JUDGED
    metric_a: str | None = None  # the recorded metric behind each side (device names may differ)
    metric_b: str | None = None
    note: str = ""
    stat: str = ""  # which statistic of its metric the row is (Stat.stat): how a chart finds it, not by name

    @property
    def change_pct(self) -> float | None:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return 100 * (self.b / self.a - 1)

    @property
    def verdict(self) -> str:
        """"changed" (beyond the runs' noise), "noise" (within it) or "" (not judged)."""
        j = self.judgement.beyond_noise
        return "" if j is None else ("changed" if j else "noise")

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "name": self.name, "unit": self.unit, "a": self.a, "b": self.b,
                "change_pct": self.change_pct, "ci_low": self.judgement.low, "ci_high": self.judgement.high,
                "ci_low_pct": self.judgement.low_pct, "ci_high_pct": self.judgement.high_pct, "verdict": self.verdict,
                "why_no_verdict": self.judgement.why or None, "metric_a": self.metric_a,
                "metric_b": self.metric_b, "note": self.note}


@dataclass(slots=True)
class Comparison:
    align: str
    a: Summary
    b: Summary
    rows: list[Row]
    settings: list[SettingChange]
    machine: list[SettingChange]  # empty: same machine
    notes: list[str] = field(default_factory=list)

    @property
    def windows(self) -> tuple[Window, Window]:
        return self.a.window, self.b.window

    def groups(self) -> dict[str, list[Row]]:
        """Rows by group, in GROUPS order, groups without rows left out."""
        out: dict[str, list[Row]] = {}
        for r in self.rows:
            out.setdefault(r.group, []).append(r)
        return {g: out[g] for g in GROUPS if g in out}

    def row(self, group: str, name: str) -> Row | None:
        return next((r for r in self.rows if r.group == group and r.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        def side(s: Summary) -> dict[str, Any]:
            w = s.window
            return {"path": str(s.path), "host": machine_host(s.meta), "server_version": s.meta.get("server_version"),
                    "origin_t": w.origin_t, "end_t": w.end_t, "seconds": w.length,
                    "start_tick": w.start_tick, "end_tick": w.end_tick, "devices": s.role_devices}
        return {
            "align": self.align, "a": side(self.a), "b": side(self.b),
            "rows": [r.to_dict() for r in self.rows],
            "settings": [{"category": c.category, "name": c.name, "a": c.a, "b": c.b} for c in self.settings],
            "machine": [{"name": c.name, "a": c.a, "b": c.b} for c in self.machine],
            "notes": self.notes,
        }


COUNTED = ("checkpoints",)  # units of counts that are 0, not unknown, when a run has no row


def _family(key: tuple[str, str]) -> tuple[str, str]:
    return key[0], key[1].split(" (")[0]


def _pair(a: list[Stat], b: list[Stat]) -> list[Row]:
    """Rows for every statistic of either side, A's order first within each group."""
    bmap = {s.key: s for s in b}
    amap = {s.key: s for s in a}
    rows = []
    keys = [s.key for s in a]
    for i, s in enumerate(b):  # a key only B has goes after the one it follows in B
        if s.key not in amap:
            before = next((b[j].key for j in range(i - 1, -1, -1) if b[j].key in keys), None)
            at = 0 if before is None else keys.index(before) + 1
            while at < len(keys) and _family(keys[at]) == _family(s.key) and keys[at] < s.key:
                at += 1  # "count (time)", "count (wal)": siblings in name order
            keys.insert(at, s.key)
    for group in GROUPS:
        for key in (k for k in keys if k[0] == group):
            sa, sb = amap.get(key), bmap.get(key)
            ref = sa or sb
            va, vb = sa and sa.value, sb and sb.value
            if ref.unit in COUNTED:  # a kind of checkpoint one run never had: 0 of them
                va, vb = (0.0 if va is None else va), (0.0 if vb is None else vb)
            note = " / ".join(dict.fromkeys(n for n in (sa and sa.note, sb and sb.note) if n))
            rows.append(Row(ref.group, ref.name, ref.unit, va, vb,
                            judge(sa and sa.estimate, sb and sb.estimate),
                            sa and sa.metric, sb and sb.metric, note, ref.stat))
    return rows


@contextmanager
def gc_paused():
    """Summaries allocate hundreds of thousands of small acyclic objects (per-tick floats and
    tuples); the cycle collector would scan them over and over for nothing (~20 % of a diff)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def compare_recordings(a: Recording, b: Recording, align: str = DEFAULT_ALIGN) -> Comparison:
    """Compare two open recordings over windows of equal length (see align.py)."""
    with gc_paused():
        return _compare(a, b, align)


def _compare(a: Recording, b: Recording, align: str) -> Comparison:
    align = resolve(align, a, b)
    wa, wb = common_windows(a, b, align)
    sa, sb = summarize(a, wa), summarize(b, wb)
    notes = [n for n in sa.notes if n in sb.notes]  # said once when true of both
    for label, rec, s, other in (("A", a, sa, sb), ("B", b, sb, sa)):
        if rec.duration - s.window.length > max(2.0, 0.05 * rec.duration) and align != "workload":
            notes.append(f"{label}: compared over {s.window.length:.0f} s of its {rec.duration:.0f} s "
                         f"(both runs cut to the same length)")
        notes += [f"{label}: {n}" for n in s.notes if n not in other.notes]
        notes += [f"{label}: setting changed during the run: {c}" for c in changes_during(s)]
    return Comparison(align, sa, sb, _pair(sa.stats, sb.stats), settings_changes(sa, sb), machine_changes(sa, sb),
                      notes)


def compare(path_a: str | os.PathLike, path_b: str | os.PathLike, align: str = DEFAULT_ALIGN) -> Comparison:
    """Open, compare and close two recording files."""
    with Recording(path_a) as a, Recording(path_b) as b:
        return compare_recordings(a, b, align)
