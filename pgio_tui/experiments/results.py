"""The results of an experiment: the figures of every finished run (figures.py), then per setting
combination the mean and 95 % interval across repeats, and the change against a baseline judged
by the spread between repeats (analysis/repeats.py). The runs' flags come along: a figure from a
run that autovacuum or a Dirty start disturbed is still in the mean, but the reader is told.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgio_tui.analysis import repeats
from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.statements import one_line
from pgio_tui.experiments.figures import Figure, RunFigures, catalog, run_figures
from pgio_tui.experiments.plan import Plan, PlanError, Run
from pgio_tui.safe_text import printable
from pgio_tui.sources.statements_sql import shown_statement
from pgio_tui.store.reader import RecordingError
from pgio_tui.workload_facts import EXIT_INTERRUPTED


@dataclass(slots=True)
class Row:
    """One setting combination: its label, the repeats' figures and their intervals."""

    label: str
    settings: dict[str, str]
    runs: list[dict[str, float | None]]
    stats: dict[str, repeats.Interval]
    changes: dict[str, repeats.Change]


@dataclass(slots=True)
class RunResult:
    """A finished run: its place in the plan, its figures and its flags (lines to read)."""

    run: Run
    figures: RunFigures
    flags: list[str]


@dataclass(slots=True)
class Results:
    plan: Plan
    baseline: dict[str, str]
    figures: list[Figure]  # the rows of the report, in order (statements depend on the runs)
    rows: list[Row]
    runs: list[RunResult]  # finished runs, in run order
    folder: Path  # the experiment folder the runs' files are in
    notes: list[str] = field(default_factory=list)

    def shown(self) -> list[Figure]:
        """The figures some run has (no PGDATA device, no pgio run: those rows are left out)."""
        return [f for f in self.figures if any(r.stats[f.key].mean is not None for r in self.rows)]


def parse_baseline(text: str | None, plan: Plan) -> dict[str, str]:
    """--baseline NAME=V (one swept setting; the others keep their first value);
    default: the first value of every swept setting."""
    base = {n: vals[0] for n, vals in plan.sweep.items()}
    if text:
        name, sep, value = text.partition("=")
        name = name.strip().lower()
        if not sep or name not in plan.sweep or value.strip() not in plan.sweep[name]:
            choices = "; ".join(f"{n}={'|'.join(v)}" for n, v in plan.sweep.items())
            raise PlanError(f"--baseline {text!r}: give one of the swept values ({choices})")
        base[name] = value.strip()
    return base


def run_flags(run: Run, figures: RunFigures | None = None) -> list[str]:
    """What disturbed a run, as lines: the flags the runner stored with it (autovacuum in its window,
    Dirty above the threshold at start, WAL files created, ...), and how it ended when that was not
    plainly (a failed or interrupted state, a workload that ended early) and no flag says so."""
    out = []
    for f in run.flags or []:
        text = f.get("text") or f.get("kind") if isinstance(f, dict) else f
        if text:
            out.append(printable(str(text)))
    kinds = {f.get("kind") for f in run.flags or [] if isinstance(f, dict)}
    if run.state in ("failed", "interrupted") and not kinds & {"workload_failed", "ended_early"}:
        out.append(f"{run.state}" + (f": {printable(run.note)}" if run.note else ""))
    w = figures.workload if figures is not None else {}
    summary = s if isinstance(s := w.get("summary"), dict) else {}
    if (w.get("exit_code") == EXIT_INTERRUPTED or summary.get("interrupted")) and "ended_early" not in kinds \
            and run.state == "done":
        out.append("workload ended early (interrupted): its figures cover the run until then")
    return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def server_statements(run: Run) -> dict[str, dict[str, float | None]] | None:
    """The statements the runner read from pg_stat_statements at the run's end (reset before it: the
    server's own figures for the whole run), keyed like figures.statements(), without pgio-tui's own
    and utility statements; None when none is left."""
    rows = run.statements
    if not isinstance(rows, list) or not rows:
        return None
    out = {}
    for st in rows:
        own = st.get("own") if isinstance(st, dict) and isinstance(st.get("own"), bool) else None
        if not isinstance(st, dict) or not isinstance(st.get("query"), str) or not shown_statement(st["query"], own):
            continue  # pgio-tui's own and utility statements, as the recorder leaves them out
        name = one_line(st["query"]) or f"queryid {st.get('queryid')}"
        out[name] = {k: _num(st.get(k)) for k in ("calls", "total_ms", "mean_ms", "stddev_ms")}
    return out or None


def collect(plan: Plan, folder: str | Path, baseline: dict[str, str]) -> Results:
    """Every finished run's figures, then one Row per combination in sweep order."""
    folder = Path(folder)
    done: list[RunResult] = []
    for run in plan.runs:
        if run.state == "done" and run.file:
            try:
                figs = run_figures(folder / run.file)
            except (RecordingError, AlignError, OSError) as exc:
                raise PlanError(f"{run.file}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
                    from None
            from_server = server_statements(run)
            if from_server is not None:
                figs.statements = from_server
            done.append(RunResult(run, figs, []))
    figures = catalog([r.figures for r in done])  # fills in the statement figures of every run
    for r in done:
        r.flags = run_flags(r.run, r.figures)
    rows = []
    for combo in plan.combinations():
        runs = [r.figures.values for r in done if r.run.settings == combo]
        rows.append(Row(" ".join(f"{k}={v}" for k, v in combo.items()), combo, runs,
                        {f.key: repeats.interval([v.get(f.key) for v in runs]) for f in figures}, {}))
    base = next((r for r in rows if r.settings == baseline), None)
    for row in rows:
        if base is not None and row is not base:
            row.changes = {f.key: repeats.change([v.get(f.key) for v in base.runs], [v.get(f.key) for v in row.runs])
                           for f in figures}
    notes = list(dict.fromkeys(n for r in done for n in r.figures.notes))
    if any(f.group == "statements" for f in figures):
        n = sum(server_statements(r.run) is not None for r in done)
        notes.append("statements: pg_stat_statements as each run left it (reset before the run)" if n == len(done)
                     else "statements: the recordings' statement windows inside each run" if not n
                     else f"statements: pg_stat_statements at the end of {n} of {len(done)} runs, the recordings' "
                          "statement windows for the others")
    return Results(plan, baseline, figures, rows, done, folder, notes)


def as_json(res: Results) -> str:
    """Everything the tables show, with numbers as numbers: the figure catalog, per combination the
    repeats' figures and per figure n, mean, interval, sd, change, noise floor and verdict; the runs
    with their flags."""
    def iv(i: repeats.Interval) -> dict[str, Any]:
        return {"n": i.n, "mean": i.mean, "ci95_low": i.low, "ci95_high": i.high, "sd": i.sd}

    shown = res.shown()
    return json.dumps({
        "baseline": res.baseline,
        "figures": [{"key": f.key, "label": f.label, "unit": f.unit, "group": f.group,
                     **({"statement": f.text} if f.text else {})} for f in shown],
        "rows": [{"settings": r.settings, "repeats": len(r.runs), "runs": r.runs,
                  "figures": {f.key: {**iv(r.stats[f.key]), "unit": f.unit, "label": f.label,
                                      **({"change_pct": r.changes[f.key].pct,
                                          "noise_floor_pct": r.changes[f.key].floor_pct,
                                          "verdict": r.changes[f.key].verdict} if f.key in r.changes else {})}
                              for f in shown}} for r in res.rows],
        "runs": [{"index": r.run.index, "settings": r.run.settings, "repeat": r.run.repeat, "file": r.run.file,
                  "flags": r.flags} for r in res.runs],
        "notes": res.notes,
    }, indent=2)
