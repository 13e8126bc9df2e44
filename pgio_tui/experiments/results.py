"""The results of an experiment: one row of figures per finished run (from its recording), then
per setting value the mean and 95 % interval across repeats, and the change against a baseline.

Per run, every figure is the analysis summary's over the workload's whole run (analysis/summary.py,
the figures `diff` shows): tps, latency mean and stddev as pgbench reported them for the run,
percentiles from the run's transactions (its merged latency histograms) — never a mean of per-tick
percentiles (a recording without histograms gets none); writes by source; PGDATA w_await.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgio_tui.analysis import repeats
from pgio_tui.analysis.align import AlignError, window
from pgio_tui.analysis.summary import PERCENTILES, summarize
from pgio_tui.experiments.plan import Plan, PlanError
from pgio_tui.metrics import WRITE_SOURCES
from pgio_tui.store.reader import Recording, RecordingError

# (key, label, unit, higher is better); one place for what the table shows and in what order.
FIGURES = (
    ("tps", "tps", "1/s"),
    ("lat_mean", "latency mean", "ms"),
    ("lat_stddev", "latency stddev", "ms"),
    ("lat_p50", "latency p50", "ms"),
    ("lat_p95", "latency p95", "ms"),
    ("lat_p99", "latency p99", "ms"),
    *((f"writes_{s}", f"buffers written: {s}", "buffers") for s in WRITE_SOURCES),
    ("pgdata_w_await", "PGDATA w_await", "ms"),
)
_LATENCY = {"tps": "tps", "lat_mean": "mean", "lat_stddev": "stddev", "lat_p50": "p50", "lat_p95": "p95",
            "lat_p99": "p99"}
FROM_TRANSACTIONS = "from transactions"  # the note summary.py gives percentiles of the run's histogram


def run_figures(path: str | Path) -> dict[str, float | None]:
    """The figures of one run's recording (None where it has none)."""
    out: dict[str, float | None] = dict.fromkeys(k for k, _, _ in FIGURES)
    with Recording(path) as rec:
        try:
            win = window(rec, "workload")
        except AlignError:
            win = window(rec, "start")
        s = summarize(rec, win)
        for key, name in _LATENCY.items():
            st = s.get("latency", name)
            if st is None or (name in PERCENTILES and st.note != FROM_TRANSACTIONS):
                continue  # a mean of per-tick percentiles is not a percentile: left out
            out[key] = st.value
        for src in WRITE_SOURCES:
            out[f"writes_{src}"] = s.value("writes", src)
        out["pgdata_w_await"] = s.value("devices", "PGDATA w_await mean")
    return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(slots=True)
class Row:
    """One setting combination: its label, the repeats' figures and their intervals."""

    label: str
    settings: dict[str, str]
    runs: list[dict[str, float | None]]
    stats: dict[str, repeats.Interval]
    changes: dict[str, repeats.Change]


def parse_baseline(text: str | None, plan: Plan) -> dict[str, str]:
    """--baseline NAME=V (repeatable as NAME=V,NAME2=V2 is not: one per swept setting is enough);
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


def table(plan: Plan, folder: str | Path, baseline: dict[str, str]) -> list[Row]:
    """Rows in sweep order; a combination's runs are the finished ones (state done)."""
    folder = Path(folder)
    figures: dict[int, dict[str, float | None]] = {}
    for run in plan.runs:
        if run.state == "done" and run.file:
            try:
                figures[run.index] = run_figures(folder / run.file)
            except (RecordingError, OSError) as exc:
                raise PlanError(f"{run.file}: {exc}") from None
    rows = []
    for combo in plan.combinations():
        runs = [figures[r.index] for r in plan.runs if r.settings == combo and r.index in figures]
        rows.append(Row(" ".join(f"{k}={v}" for k, v in combo.items()), combo, runs,
                        {k: repeats.interval([f[k] for f in runs]) for k, _, _ in FIGURES}, {}))
    base = next((r for r in rows if r.settings == baseline), None)
    for row in rows:
        if base is not None and row is not base:
            row.changes = {k: repeats.change([f[k] for f in base.runs], [f[k] for f in row.runs])
                           for k, _, _ in FIGURES}
    return rows


def as_json(rows: list[Row], baseline: dict[str, str]) -> str:
    def iv(i: repeats.Interval) -> dict[str, Any]:
        return {"n": i.n, "mean": i.mean, "ci95_low": i.low, "ci95_high": i.high, "sd": i.sd}
    return json.dumps({"baseline": baseline, "rows": [
        {"settings": r.settings, "repeats": len(r.runs), "runs": r.runs,
         "figures": {k: {**iv(r.stats[k]), "unit": unit, "label": label,
                         **({"change_pct": r.changes[k].pct, "noise_floor_pct": r.changes[k].floor_pct,
                             "verdict": r.changes[k].verdict} if k in r.changes else {})}
                     for k, label, unit in FIGURES}} for r in rows]}, indent=2)
