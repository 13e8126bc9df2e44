"""The results of an experiment: the figures of every finished run (figures.py), then per setting
combination the mean and 95 % interval across repeats, and the change against a baseline judged
by the spread between repeats (analysis/repeats.py). The runs' flags come along: a figure from a
run that autovacuum or a Dirty start disturbed is still in the mean, but the reader is told.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pgio_tui.analysis import repeats
from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.own_io import SHARED_BELOW_PCT
from pgio_tui.analysis.statements import one_line
from pgio_tui.experiments import hygiene
from pgio_tui.experiments.charts import correlation
from pgio_tui.experiments.figures import Figure, RunFigures, catalog, device_share_kind, run_figures
from pgio_tui.experiments.plan import WORKLOAD_OPTIONS, Plan, PlanError, Run
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
    arm: int = 0  # its place in Plan.combinations()
    baseline: bool = False


@dataclass(slots=True)
class RunResult:
    """A finished run: its place in the plan, its figures and its flags (lines to read)."""

    run: Run
    figures: RunFigures
    flags: list[str]
    arm: int = -1  # its combination (Plan.arm_of)


@dataclass(slots=True)
class Results:
    plan: Plan
    baseline: dict[str, str]
    figures: list[Figure]  # the rows of the report, in order (statements depend on the runs)
    rows: list[Row]
    runs: list[RunResult]  # finished runs, in run order
    folder: Path  # the experiment folder the runs' files are in
    notes: list[str] = field(default_factory=list)
    pick: tuple[str, ...] = ()  # --figures GLOBs: the figures to show instead of the default set
    drift: list[str] = field(default_factory=list)  # figures trending with run order, as lines

    def present(self) -> list[Figure]:
        """The figures some run has (no PGDATA device, no pgio run: those rows are left out)."""
        return [f for f in self.figures if any(r.stats[f.key].mean is not None for r in self.rows)]

    def shown(self) -> list[Figure]:
        """The figures the report shows: the default set, or those --figures picks (by catalog name,
        key or label)."""
        if not self.pick:
            return [f for f in self.present() if f.default]
        return [f for f in self.present() if any(fnmatch.fnmatchcase(x, g) for g in self.pick
                                                 for x in (f.name, f.key, f.label))]

    def row_of(self, run: RunResult) -> Row | None:
        return self.rows[run.arm] if 0 <= run.arm < len(self.rows) else None


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


FOLDER = "folder"  # the dimension of merged folders that differ in nothing a dimension names


def merge(plans: list[tuple[Plan, Path]]) -> Plan:
    """Several experiment folders as one plan: the same workload kind and the same settings swept
    (their values joined); the workload option their workloads differ in becomes one more dimension
    (pgio.update_pct = 0, 50), else the folder's name does. Each run keeps its folder's file (by its
    whole path) and its run order within its folder."""
    first = plans[0][0]
    kind = first.workload.get("kind")
    if any(p.workload.get("kind") != kind or list(p.sweep) != list(first.sweep) for p, _ in plans):
        raise PlanError("these folders are not one grid: give folders of the same workload with the same "
                        "settings swept (--set names in the same order)")
    specs = [p.workload.get("config") or {} for p, _ in plans] if kind == "pgio" else \
        [{"scale": p.workload.get("init_scale")} for p, _ in plans]
    differ = sorted({k for s in specs for k in s if any(t.get(k) != s.get(k) for t in specs)})
    dim = f"{kind}.{differ[0]}" if len(differ) == 1 and f"{kind}.{differ[0]}" in WORKLOAD_OPTIONS \
        and f"{kind}.{differ[0]}" not in first.sweep else FOLDER
    values = [str(s.get(differ[0])) if dim != FOLDER else folder.resolve().name for s, (_, folder) in zip(specs, plans)]
    if len(set(values)) != len(values):
        raise PlanError(f"two folders with the same {dim} ({values[0]}): give each value once")
    sweep = {dim: values, **{n: list(dict.fromkeys(v for p, _ in plans for v in p.sweep[n])) for n in first.sweep}}
    merged = Plan(sweep=sweep, repeat=max(p.repeat for p, _ in plans), order=first.order, workload=first.workload,
                  target=first.target, warmup_s=first.warmup_s, restart_warmup_s=first.restart_warmup_s,
                  discard_first=first.discard_first,
                  interval=first.interval, restored=all(p.restored for p, _ in plans))
    for value, (p, folder) in zip(values, plans):
        for r in p.runs:
            merged.runs.append(Run(len(merged.runs) + 1, {dim: value, **r.settings}, r.repeat, r.state,
                                   str(folder.resolve() / r.file) if r.file else None, dict(r.applied), r.note,
                                   r.flags, r.hygiene, r.warmup, r.ran_s, r.page_cache, r.statements))
    return merged


def run_flags(run: Run, figures: RunFigures | None = None) -> list[str]:
    """What disturbed a run, as lines: the flags the runner stored with it (autovacuum in its window,
    Dirty above the threshold at start, WAL files created, ...), and how it ended when that was not
    plainly (a failed or interrupted state, a workload that ended early) and no flag says so."""
    out = []
    for f in run.flags or []:
        if isinstance(f, dict) and not hygiene.matters(f):
            continue  # autovacuum of a small system table: nothing the run's figures would show
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


_SHARE_WORDS = {"read": "reads", "write": "writes", "all": "I/O"}


def shared_device(fig: Figure, runs: list[RunResult]) -> str | None:
    """The verdict of a device figure when, in one of `runs`, the server's own processes did less than
    SHARED_BELOW_PCT of what it depends on (the device's reads, writes, or all its I/O for its queue):
    on a device shared with others, the figure is mostly their I/O, not the setting's effect."""
    kind = device_share_kind(fig)
    if kind is None:
        return None
    role, what = kind
    low = [(x, r.run.index) for r in runs if (x := (r.figures.own_io.get(role) or {}).get(what)) is not None
           and x < SHARED_BELOW_PCT]
    if not low:
        return None
    x, index = min(low)
    return f"not judged (a shared device: the server did at most {x:.0f} % of its {_SHARE_WORDS[what]} in run {index})"


def shared_notes(runs: list[RunResult]) -> list[str]:
    """Per role whose device the server shared with others in some run: how little of it was the server's."""
    out, said = [], set()
    for role in dict.fromkeys(role for r in runs for role in r.figures.own_io):
        dev = next((r.figures.devices.get(role) for r in runs if r.figures.devices.get(role)), "?")
        parts = []
        for what in ("read", "write"):
            xs = [x for r in runs if (x := (r.figures.own_io.get(role) or {}).get(what)) is not None]
            if xs and min(xs) < SHARED_BELOW_PCT:
                span = f"{min(xs):.0f}" if f"{min(xs):.0f}" == f"{max(xs):.0f}" else f"{min(xs):.0f}-{max(xs):.0f}"
                parts.append(f"{span} % of its {_SHARE_WORDS[what]}")
        if parts and dev not in said:  # pg_wal on PGDATA's device: said once
            said.add(dev)
            out.append(f"{role}'s device ({printable(dev)}) is shared: the server's processes did at most "
                       f"{' and '.join(parts)} in the runs (their /proc/<pid>/io against the device's bytes); a "
                       f"figure of it is not judged where that share is under {SHARED_BELOW_PCT:.0f} %: it is "
                       "mostly other processes' I/O")
    return out


def warmup_notes(plan: Plan, runs: list[Run]) -> list[str]:
    """What the figures leave out before each run: the warm-ups (unrecorded), after a restart and
    every run; or that runs right after a restart hold its cold caches."""
    out = []
    after = [r for r in runs if r.warmup.get("after_restart")]
    warmed = [r for r in after if _positive(r.warmup.get("s"))]
    if warmed:
        secs = sorted({float(r.warmup["s"]) for r in warmed})
        out.append(f"warm-up after a restart: {len(warmed)} run(s) started right after the server restarted; "
                   f"the first {' / '.join(f'{s:g}' for s in secs)} s of the workload ran unrecorded before each "
                   "(cold caches), so no figure holds them (--restart-warmup S; 0: none)")
    cold = [r for r in after if not _positive(r.warmup.get("s"))]
    if cold:
        out.append(f"no warm-up after a restart: the first seconds of {len(cold)} run(s) (cold caches) are in "
                   f"their figures (--restart-warmup 0): runs {', '.join(str(r.index) for r in cold[:20])}")
    if plan.warmup_s > 0:
        out.append(f"warm-up: {plan.warmup_s:g} s of the workload before every run, unrecorded (--warmup)")
    return out


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


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
    combos = plan.combinations()
    for r in done:
        r.arm = plan.arm_of(r.run, combos)
    figures = catalog([r.figures for r in done])  # fills in the statement figures of every run
    for r in done:
        r.flags = run_flags(r.run, r.figures)
    rows = []
    by_arm: dict[int, list[dict[str, float | None]]] = {}
    runs_of: dict[int, list[RunResult]] = {}
    seen: dict[tuple, int] = {}
    for r in done:
        by_arm.setdefault(r.arm, []).append(r.figures.values)
        runs_of.setdefault(r.arm, []).append(r)
    for arm, combo in enumerate(combos):
        runs = by_arm.get(arm, [])
        label = plan.label_of(combo)
        alike = seen[tuple(combo.items())] = seen.get(tuple(combo.items()), 0) + 1  # A vs A: the 2nd alike
        rows.append(Row(label + (f" (again, {alike})" if alike > 1 else ""), combo, runs,
                        {f.key: repeats.interval([v.get(f.key) for v in runs], f.domain) for f in figures}, {}, arm))
    base = next((r for r in rows if r.settings == baseline), None)
    for row in rows:
        row.baseline = row is base
        if base is not None and row is not base:
            row.changes = {f.key: repeats.change([v.get(f.key) for v in base.runs], [v.get(f.key) for v in row.runs],
                                                 f.domain) for f in figures}
            both = runs_of.get(base.arm, []) + runs_of.get(row.arm, [])
            for f in figures:
                why = shared_device(f, both)
                if why:
                    row.changes[f.key] = replace(row.changes[f.key], verdict=why, detectable=None, detectable_pct=None)
    notes = list(dict.fromkeys(n for r in done for n in r.figures.notes))
    if any(f.group == "statements" for f in figures):
        n = sum(server_statements(r.run) is not None for r in done)
        notes.append("statements: pg_stat_statements as each run left it (reset before the run)" if n == len(done)
                     else "statements: the recordings' statement windows inside each run" if not n
                     else f"statements: pg_stat_statements at the end of {n} of {len(done)} runs, the recordings' "
                          "statement windows for the others")
    notes += warmup_notes(plan, [r.run for r in done]) + shared_notes(done)
    res = Results(plan, baseline, figures, rows, done, folder, notes)
    res.drift = drift_lines(res)
    return res


def drift_lines(res: Results) -> list[str]:
    """Per shown figure: does it trend with run order inside the combinations? Each run's distance
    from its combination's mean, against its place in the run order: Pearson's r, flagged when its
    t-test rejects "no trend" at 95 % (n − combinations − 1 degrees of freedom: needs 3+ repeats)."""
    out = []
    for f in res.shown():
        xs, ys, arms = [], [], set()
        for r in res.runs:
            row, v = res.row_of(r), r.figures.values.get(f.key)
            mean = None if row is None else row.stats[f.key].mean
            if v is None or row is None or mean is None:
                continue
            xs.append(float(r.run.index))
            ys.append(v - mean)
            arms.add(row.arm)
        df = len(xs) - len(arms) - 1
        if df < 1 or len(set(ys)) < 2:
            continue
        rho = correlation(xs, ys)
        if rho is None or abs(rho) >= 1:
            continue
        t = rho * math.sqrt(df / (1 - rho * rho))
        if abs(t) > repeats.t975(df):
            out.append(f"drift: {f.label} {'rises' if rho > 0 else 'falls'} with run order within its combinations "
                       f"(r = {rho:+.2f} over {len(xs)} runs): a warming cache, WAL recycling or vacuum debt, "
                       "not the setting")
    return out


def as_json(res: Results) -> str:
    """Everything the tables show, with numbers as numbers: the figure catalog, per combination the
    repeats' figures and per figure n, mean, interval, sd, change, noise floor and verdict; the runs
    with their flags."""
    def iv(i: repeats.Interval) -> dict[str, Any]:
        return {"n": i.n, "mean": i.mean, "ci95_low": i.low, "ci95_high": i.high, "sd": i.sd}

    def ch(c: repeats.Change) -> dict[str, Any]:
        return {"change_pct": c.pct, "noise_floor_pct": c.floor_pct, "verdict": c.verdict, "change": c.diff,
                "noise_floor": c.floor, "detectable": c.detectable, "detectable_pct": c.detectable_pct}

    shown = res.present()  # every figure, the default set or not (`shown` says which the tables show)
    default = {f.key for f in res.shown()}
    return json.dumps({
        "baseline": res.baseline,
        "figures": [{"key": f.key, "name": f.name, "label": f.label, "unit": f.unit, "group": f.group,
                     "shown": f.key in default, **({"statement": f.text} if f.text else {})} for f in shown],
        "rows": [{"settings": r.settings, "label": r.label, "baseline": r.baseline, "repeats": len(r.runs),
                  "runs": r.runs,
                  "figures": {f.key: {**iv(r.stats[f.key]), "unit": f.unit, "label": f.label, "name": f.name,
                                      **(ch(r.changes[f.key]) if f.key in r.changes else {})}
                              for f in shown}} for r in res.rows],
        "runs": [{"index": r.run.index, "settings": r.run.settings, "repeat": r.run.repeat, "file": r.run.file,
                  "flags": r.flags} for r in res.runs],
        "drift": res.drift,
        "notes": res.notes,
    }, indent=2)
