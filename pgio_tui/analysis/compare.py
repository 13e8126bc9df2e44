"""N recordings against a baseline (N >= 2): the comparison every output renders (table, markdown,
CSV, JSON, the HTML report, the TUI diff screen). `diff A B` is the case N = 2.

`compare_files(paths, align)` opens the recordings, cuts them to their windows (align.windows_of: each
workload's own run, or all cut to the shortest stretch), summarizes each once, and pairs every
statistic of every run with the baseline's (run 0): its value, change % and the noise judgement
of noise.py, so a three-way comparison's B column is the two-way diff of A and B. Nothing here
draws; the TUI gets everything from a `Comparison` (its `windows` say where each run's x = 0 is).
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pgio_tui.analysis.align import DEFAULT_ALIGN, Window, resolve, windows_of
from pgio_tui.analysis.noise import NOT_JUDGED, Judgement, judge
from pgio_tui.analysis.settings_diff import SettingChange, changes_during, machine_across, machine_host, settings_across
from pgio_tui.analysis.summary import summarize
from pgio_tui.analysis.summary_model import GROUPS, Stat, Summary
from pgio_tui.store.reader import Recording

__all__ = ["Comparison", "Row", "compare", "compare_files", "compare_recordings", "letter"]

COUNTED = ("checkpoints",)  # units of counts that are 0, not unknown, when a run has no row


def letter(i: int) -> str:
    """The short name of run i: A (the baseline) B C …; past Z, R27, R28 …"""
    return chr(ord("A") + i) if i < 26 else f"R{i + 1}"


@dataclass(slots=True)
class Row:
    """One statistic in every run: its values, and each run's judgement against the baseline
    (None for the baseline itself). `a`, `b`, `judgement`, `verdict` are the two-run view."""

    group: str
    name: str
    unit: str
    values: list[float | None]
    judgements: list[Judgement | None]
    metrics: list[str | None]  # the recorded metric behind each run's value (device names may differ)
    note: str = ""
    stat: str = ""  # which statistic of its metric the row is (Stat.stat): how a chart finds it, not by name
    key: tuple[str, str] = ("", "")  # what pairs it across runs (Stat.key): name is display only

    def change_pct_of(self, i: int) -> float | None:
        a, b = self.values[0], self.values[i]
        if i == 0 or a is None or b is None or a == 0:
            return None
        return 100 * (b / a - 1)

    def judgement_of(self, i: int) -> Judgement:
        return self.judgements[i] or NOT_JUDGED

    def verdict_of(self, i: int) -> str:
        """"changed" (beyond the runs' noise), "noise" (within it) or "" (not judged)."""
        j = self.judgement_of(i).beyond_noise
        return "" if j is None else ("changed" if j else "noise")

    @property
    def a(self) -> float | None:
        return self.values[0]

    @property
    def b(self) -> float | None:
        return self.values[1]

    @property
    def metric_a(self) -> str | None:
        return self.metrics[0]

    @property
    def metric_b(self) -> str | None:
        return self.metrics[1]

    @property
    def judgement(self) -> Judgement:
        return self.judgement_of(1)

    @property
    def change_pct(self) -> float | None:
        return self.change_pct_of(1)

    @property
    def verdict(self) -> str:
        return self.verdict_of(1)

    def cell_dict(self, i: int) -> dict[str, Any]:
        """Run i's value and, for a run that is not the baseline, its change against it."""
        j = self.judgement_of(i)
        return {"value": self.values[i], "change_pct": self.change_pct_of(i), "ci_low": j.low, "ci_high": j.high,
                "ci_low_pct": j.low_pct, "ci_high_pct": j.high_pct, "verdict": self.verdict_of(i),
                "why_no_verdict": j.why or None}


@dataclass(slots=True)
class Comparison:
    align: str
    summaries: list[Summary]  # the baseline first
    labels: list[str]  # what each run is (a file name, or an experiment run's settings and repeat)
    rows: list[Row]
    settings: list[SettingChange]  # differing only, a value per run
    machine: list[SettingChange]  # empty: one machine
    notes: list[str] = field(default_factory=list)

    @property
    def a(self) -> Summary:
        return self.summaries[0]

    @property
    def b(self) -> Summary:
        return self.summaries[1]

    @property
    def windows(self) -> tuple[Window, ...]:
        return tuple(s.window for s in self.summaries)

    @property
    def letters(self) -> list[str]:
        return [letter(i) for i in range(len(self.summaries))]

    def groups(self) -> dict[str, list[Row]]:
        """Rows by group, in GROUPS order, groups without rows left out."""
        out: dict[str, list[Row]] = {}
        for r in self.rows:
            out.setdefault(r.group, []).append(r)
        return {g: out[g] for g in GROUPS if g in out}

    def row(self, group: str, name: str) -> Row | None:
        """The row shown as `name` in `group` (display text: for tests and people; code uses find)."""
        return next((r for r in self.rows if r.group == group and r.name == name), None)

    def find(self, metric: str, stat: str) -> Row | None:
        """The row of statistic `stat` of `metric` (Stat.key: a device's metric named by its role)."""
        return next((r for r in self.rows if r.key == (metric, stat)), None)

    def to_dict(self) -> dict[str, Any]:
        """Two runs: A and B side by side (`a`, `b`, one line per statistic); N runs: `runs` and
        a value per run in each row."""
        def run(i: int) -> dict[str, Any]:
            s, w = self.summaries[i], self.summaries[i].window
            return {"path": str(s.path), "host": machine_host(s.meta), "server_version": s.meta.get("server_version"),
                    "origin_t": w.origin_t, "end_t": w.end_t, "seconds": w.length,
                    "start_tick": w.start_tick, "end_tick": w.end_tick, "devices": s.role_devices}
        if len(self.summaries) == 2:
            return {
                "align": self.align, "a": run(0), "b": run(1),
                "rows": [{"group": r.group, "name": r.name, "unit": r.unit, "a": r.a, "b": r.b,
                          **{k: v for k, v in r.cell_dict(1).items() if k != "value"},
                          "metric_a": r.metric_a, "metric_b": r.metric_b, "note": r.note} for r in self.rows],
                "settings": [{"category": c.category, "name": c.name, "a": c.a, "b": c.b} for c in self.settings],
                "machine": [{"name": c.name, "a": c.a, "b": c.b} for c in self.machine],
                "notes": self.notes,
            }
        letters = self.letters

        def cell(r: Row, i: int) -> dict[str, Any]:
            out: dict[str, Any] = {"run": letters[i]}
            out.update(r.cell_dict(i) if i else {"value": r.values[0]})
            return out
        return {
            "align": self.align, "baseline": letters[0],
            "runs": [{"letter": letters[i], "label": self.labels[i], "path": str(self.summaries[i].path),
                      "baseline": i == 0, **run(i)} for i in range(len(self.summaries))],
            "rows": [{"group": r.group, "name": r.name, "unit": r.unit, "note": r.note,
                      "values": [cell(r, i) for i in range(len(self.summaries))]} for r in self.rows],
            "settings": [{"category": c.category, "name": c.name, "values": dict(zip(letters, c.values))}
                         for c in self.settings],
            "machine": [{"name": c.name, "values": dict(zip(letters, c.values))} for c in self.machine],
            "notes": self.notes,
        }


Key = tuple[str, str]  # a row's identity, Stat.key: (metric, statistic), never display text
Shown = dict[Key, tuple[str, str]]  # key -> (group, name) a row is shown under


def _family(shown: tuple[str, str]) -> tuple[str, str]:
    return shown[0], shown[1].split(" (")[0]


def _pair_order(a: list[Stat], b: list[Stat], shown: Shown) -> list[Key]:
    """The keys of two runs' statistics: A's order, a key only B has after the one it follows in B
    (siblings such as "count (time)", "count (wal)" in name order), grouped in GROUPS order."""
    keys = [s.key for s in a]
    known = set(keys)
    for i, s in enumerate(b):
        if s.key not in known:
            before = next((b[j].key for j in range(i - 1, -1, -1) if b[j].key in keys), None)
            at = 0 if before is None else keys.index(before) + 1
            mine = (s.group, s.name)
            while at < len(keys) and _family(shown[keys[at]]) == _family(mine) and shown[keys[at]] < mine:
                at += 1
            keys.insert(at, s.key)
    return [k for g in GROUPS for k in keys if shown[k][0] == g]


def _order(summaries: list[Summary], shown: Shown) -> list[Key]:
    """Every run's keys: the first pair's order, later keys after the key they follow in their
    own pair with the baseline, grouped in GROUPS order."""
    keys: list[Key] = []
    for s in summaries[1:]:
        prev: Key | None = None
        for k in _pair_order(summaries[0].stats, s.stats, shown):
            if k not in keys:
                keys.insert(keys.index(prev) + 1 if prev is not None and prev in keys else len(keys), k)
            prev = k
    keys.sort(key=lambda k: GROUPS.index(shown[k][0]) if shown[k][0] in GROUPS else len(GROUPS))
    return keys


def rows_of(summaries: list[Summary]) -> list[Row]:
    """A row for every statistic any run has, paired across runs by its key (Stat.key), each run
    judged against the baseline (run 0); shown under the name of the first run that has it."""
    maps = [{s.key: s for s in summ.stats} for summ in summaries]
    shown: Shown = {}
    for m in maps:
        for k, st in m.items():
            shown.setdefault(k, (st.group, st.name))
    base = maps[0]
    rows = []
    for key in _order(summaries, shown):
        found = [m.get(key) for m in maps]
        ref = next(s for s in found if s is not None)
        values = [None if s is None else s.value for s in found]
        if ref.unit in COUNTED:  # a kind of checkpoint a run never had: 0 of them
            values = [0.0 if v is None else v for v in values]
        sa = base.get(key)
        judgements: list[Judgement | None] = [None, *(judge(None if sa is None else sa.estimate,
                                                            None if s is None else s.estimate, ("A", letter(i)))
                                                      for i, s in enumerate(found[1:], 1))]
        note = " / ".join(dict.fromkeys(s.note for s in found if s is not None and s.note))
        rows.append(Row(ref.group, ref.name, ref.unit, values, judgements,
                        [None if s is None else s.metric for s in found], note, ref.stat, key))
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


def compare_recordings(recs: list[Recording], align: str = DEFAULT_ALIGN, baseline: int = 0,
                       labels: list[str] | None = None) -> Comparison:
    """Compare N >= 2 open recordings with recs[baseline], which becomes run A (index 0); the
    others follow in the order given."""
    if len(recs) < 2:
        raise ValueError("a comparison takes two or more recordings")
    if not 0 <= baseline < len(recs):
        raise ValueError("the baseline is not one of the recordings")
    order = [baseline] + [i for i in range(len(recs)) if i != baseline]
    recs = [recs[i] for i in order]
    with gc_paused():
        align = resolve(align, *recs)
        summaries = [summarize(rec, w) for rec, w in zip(recs, windows_of(recs, align))]
        rows = rows_of(summaries)
    letters = [letter(i) for i in range(len(recs))]
    common = [n for n in summaries[0].notes if all(n in s.notes for s in summaries)]  # said once
    notes = list(common)
    cut = "both runs" if len(recs) == 2 else "all runs"
    for i, (rec, s) in enumerate(zip(recs, summaries)):
        if rec.duration - s.window.length > max(2.0, 0.05 * rec.duration) and align != "workload":
            notes.append(f"{letters[i]}: compared over {s.window.length:.0f} s of its {rec.duration:.0f} s "
                         f"({cut} cut to the same length)")
        notes += [f"{letters[i]}: {n}" for n in s.notes if n not in common]
        notes += [f"{letters[i]}: setting changed during the run: {c}" for c in changes_during(s)]
    labels = [labels[i] for i in order] if labels else [s.path.name for s in summaries]
    return Comparison(align, summaries, labels, rows, settings_across(summaries), machine_across(summaries), notes)


def compare_files(paths: list[str | os.PathLike], align: str = DEFAULT_ALIGN, baseline: int = 0,
                  labels: list[str] | None = None) -> Comparison:
    """Open, compare and close N recording files."""
    recs: list[Recording] = []
    try:
        for p in paths:
            recs.append(Recording(p))
        return compare_recordings(recs, align, baseline, labels)
    finally:
        for rec in recs:
            rec.close()


def compare(path_a: str | os.PathLike, path_b: str | os.PathLike, align: str = DEFAULT_ALIGN) -> Comparison:
    """Open, compare and close two recording files."""
    return compare_files([path_a, path_b], align)
