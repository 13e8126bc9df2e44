"""N recordings against one baseline: the N-way form of compare.py, for `diff A B C …`, `diff DIR`
and `report` of N files.

Every recording is summarized once over its window (windows_of: its workload's own run, or all cut
to the shortest stretch), then each other run is paired with the baseline exactly as `diff A B`
pairs them (compare._pair: the same rows, the same block-bootstrap judgement of noise.py), so a
three-way diff's B column is the two-way diff of A and B.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pgio_tui.analysis.align import DEFAULT_ALIGN, resolve, windows_of
from pgio_tui.analysis.compare import COUNTED, Row, _pair, gc_paused
from pgio_tui.analysis.noise import Judgement
from pgio_tui.analysis.settings_diff import changes_during, machine_across, machine_host, settings_across
from pgio_tui.analysis.summary import summarize
from pgio_tui.analysis.summary_model import GROUPS, Summary
from pgio_tui.store.reader import Recording


def letter(i: int) -> str:
    """The short name of run i in tables: A (the baseline) B C …; past Z, R27, R28 …"""
    return chr(ord("A") + i) if i < 26 else f"R{i + 1}"


@dataclass(slots=True)
class ManyRow:
    group: str
    name: str
    unit: str
    values: list[float | None]  # one per run, in the runs' order
    pairs: list[Row | None]  # the baseline-vs-run row of compare._pair; None for the baseline itself
    stat: str = ""
    note: str = ""

    def judgement(self, i: int) -> Judgement | None:
        p = self.pairs[i]
        return None if p is None else p.judgement


@dataclass(slots=True)
class ManyComparison:
    align: str
    summaries: list[Summary]
    labels: list[str]  # what each run is (a file name, or an experiment run's settings and repeat)
    baseline: int
    rows: list[ManyRow]
    settings: list[tuple[str, str, list[str | None]]]  # (category, name, value per run), differing only
    machine: list[tuple[str, list[str | None]]]
    notes: list[str] = field(default_factory=list)

    @property
    def letters(self) -> list[str]:
        return [letter(i) for i in range(len(self.summaries))]

    def order(self) -> list[int]:
        """Run indexes with the baseline first, the others in the order given."""
        return [self.baseline] + [i for i in range(len(self.summaries)) if i != self.baseline]

    def groups(self) -> dict[str, list[ManyRow]]:
        out: dict[str, list[ManyRow]] = {}
        for r in self.rows:
            out.setdefault(r.group, []).append(r)
        return {g: out[g] for g in GROUPS if g in out}

    def row(self, group: str, name: str) -> ManyRow | None:
        return next((r for r in self.rows if r.group == group and r.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        def run(i: int) -> dict[str, Any]:
            s, w = self.summaries[i], self.summaries[i].window
            return {"letter": letter(i), "label": self.labels[i], "path": str(s.path), "baseline": i == self.baseline,
                    "host": machine_host(s.meta), "server_version": s.meta.get("server_version"),
                    "origin_t": w.origin_t, "end_t": w.end_t, "seconds": w.length,
                    "start_tick": w.start_tick, "end_tick": w.end_tick, "devices": s.role_devices}

        def cell(r: ManyRow, i: int) -> dict[str, Any]:
            out: dict[str, Any] = {"run": letter(i), "value": r.values[i]}
            p = r.pairs[i]
            if p is not None:
                j = p.judgement
                out.update(change_pct=p.change_pct, ci_low=j.low, ci_high=j.high, ci_low_pct=j.low_pct,
                           ci_high_pct=j.high_pct, verdict=p.verdict, why_no_verdict=j.why or None)
            return out
        return {
            "align": self.align, "baseline": letter(self.baseline),
            "runs": [run(i) for i in range(len(self.summaries))],
            "rows": [{"group": r.group, "name": r.name, "unit": r.unit, "note": r.note,
                      "values": [cell(r, i) for i in self.order()]} for r in self.rows],
            "settings": [{"category": c, "name": n, "values": dict(zip(self.letters, v))} for c, n, v in self.settings],
            "machine": [{"name": n, "values": dict(zip(self.letters, v))} for n, v in self.machine],
            "notes": self.notes,
        }


def _merge(pairs: dict[int, list[Row]], n: int, base: int) -> list[ManyRow]:
    """One ManyRow per statistic any pair has, in the first pair's order (later keys after the
    key they follow in their own pair), grouped in GROUPS order."""
    keys: list[tuple[str, str]] = []
    for rows in pairs.values():
        prev = None
        for r in rows:
            k = (r.group, r.name)
            if k not in keys:
                keys.insert(keys.index(prev) + 1 if prev in keys else len(keys), k)
            prev = k
    keys.sort(key=lambda k: GROUPS.index(k[0]) if k[0] in GROUPS else len(GROUPS))
    by_key = {i: {(r.group, r.name): r for r in rows} for i, rows in pairs.items()}
    out = []
    for k in keys:
        found = [by_key[i].get(k) for i in range(n)]
        ref = next(r for r in found if r is not None)
        base_value = next((r.a for r in found if r is not None and r.a is not None), None)
        values = [base_value if i == base else (found[i].b if found[i] else None) for i in range(n)]
        if ref.unit in COUNTED:  # a kind of checkpoint neither this run nor the baseline had: 0 of them
            values = [0.0 if v is None else v for v in values]
        notes = " / ".join(dict.fromkeys(r.note for r in found if r is not None and r.note))
        out.append(ManyRow(ref.group, ref.name, ref.unit, values, found, ref.stat, notes))
    return out


def compare_many_recordings(recs: list[Recording], align: str = DEFAULT_ALIGN, baseline: int = 0,
                            labels: list[str] | None = None) -> ManyComparison:
    """Compare N >= 2 open recordings with recs[baseline], which becomes run A (index 0); the
    others follow in the order given."""
    if len(recs) < 2:
        raise ValueError("a comparison takes two or more recordings")
    if not 0 <= baseline < len(recs):
        raise ValueError("the baseline is not one of the recordings")
    order = [baseline] + [i for i in range(len(recs)) if i != baseline]  # the baseline is A
    recs = [recs[i] for i in order]
    labels = [labels[i] for i in order] if labels else None
    baseline = 0
    with gc_paused():
        align = resolve(align, *recs)
        summaries = [summarize(rec, w) for rec, w in zip(recs, windows_of(recs, align))]
        base = summaries[baseline]
        pairs = {i: _pair(base.stats, s.stats) for i, s in enumerate(summaries) if i != baseline}
        pairs[baseline] = []
        rows = _merge(pairs, len(recs), baseline)
        for r in rows:
            r.pairs[baseline] = None
    notes = []
    common = [n for n in summaries[0].notes if all(n in s.notes for s in summaries)]
    notes += common
    for i, s in enumerate(summaries):
        rec = recs[i]
        if rec.duration - s.window.length > max(2.0, 0.05 * rec.duration) and align != "workload":
            notes.append(f"{letter(i)}: compared over {s.window.length:.0f} s of its {rec.duration:.0f} s "
                         f"(all runs cut to the same length)")
        notes += [f"{letter(i)}: {n}" for n in s.notes if n not in common]
        notes += [f"{letter(i)}: setting changed during the run: {c}" for c in changes_during(s)]
    labels = list(labels) if labels else [s.path.name for s in summaries]
    return ManyComparison(align, summaries, labels, baseline, rows, settings_across(summaries),
                          machine_across(summaries), notes)


def compare_many(paths: list[str | os.PathLike], align: str = DEFAULT_ALIGN, baseline: int = 0,
                 labels: list[str] | None = None) -> ManyComparison:
    """Open, compare and close N recording files."""
    recs: list[Recording] = []
    try:
        for p in paths:
            recs.append(Recording(p))
        return compare_many_recordings(recs, align, baseline, labels)
    finally:
        for rec in recs:
            rec.close()
