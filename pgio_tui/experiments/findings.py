"""An experiment's findings: each finished run's (analysis/findings.py, over the run's own window),
and the findings that differ between settings: a finding the runs of one setting show and the
baseline's do not (or the reverse), with the figures that changed beyond noise in the same runs.
That is a correlation across runs, and it is said as one, never as a proof of cause."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pgio_tui.analysis.findings import Finding, findings_of_file
from pgio_tui.experiments.results import Results, RunResult
from pgio_tui.safe_text import html_text as escape
from pgio_tui.safe_text import printable

MOVED_SHOWN = 3  # figures named beside a finding that differs: the largest changes beyond noise
WRAPAROUND = "autovacuum_wraparound"  # the runner's flag kind (experiments/hygiene.py)


@dataclass(slots=True)
class Difference:
    settings: str  # the combination's label
    id: str  # the finding
    runs_with: int
    runs: int
    baseline_with: int
    baseline_runs: int
    moved: list[tuple[str, float, str]]  # (figure label, change %, unit) beyond noise in the same combination

    @property
    def text(self) -> str:
        moved = ", ".join(f"{label} {pct:+.0f} %" for label, pct, _ in self.moved)
        return (f"with {self.settings}: {self.id} in {self.runs_with} of {self.runs} run(s), the baseline's in "
                f"{self.baseline_with} of {self.baseline_runs}"
                + (f"; changed beyond noise in the same runs: {moved} (a correlation across runs, not a proof "
                   "of cause)" if moved else "; no figure changed beyond noise with it"))

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "id": self.id, "runs_with": self.runs_with, "runs": self.runs,
                "baseline_with": self.baseline_with, "baseline_runs": self.baseline_runs,
                "moved": [{"figure": label, "change_pct": pct, "unit": unit} for label, pct, unit in self.moved],
                "text": self.text}


@dataclass(slots=True)
class ExperimentFindings:
    runs: list[tuple[RunResult, list[Finding]]]
    differences: list[Difference]

    def to_list(self) -> list[dict[str, Any]]:
        """The JSON `findings` list: every run's findings, each with its run."""
        return [{"run": r.run.index, "settings": r.run.settings, "repeat": r.run.repeat, **f.to_dict()}
                for r, found in self.runs for f in found]

    def lines(self) -> list[str]:
        out = [d.text for d in self.differences]
        for r, found in self.runs:
            out += [f"run {r.run.index} ({r.run.label}, repeat {r.run.repeat}): [{f.strength}] {f.id}: {f.text}"
                    for f in found]
        return [printable(x) for x in out]

    def html(self) -> str:
        if not any(found for _, found in self.runs):
            return "<h2>Findings</h2><p>no findings: no run crossed a rule's threshold</p>"
        diff = "".join(f"<li>{escape(d.text)}</li>" for d in self.differences)
        runs = "".join(f"<li>run {r.run.index} ({escape(r.run.label)}, repeat {r.run.repeat}): <b>{escape(f.id)}</b> "
                       f"<i>({escape(f.strength)})</i>: {escape(f.text)}</li>" for r, found in self.runs for f in found)
        return ("<h2>Findings</h2><p class=muted>Each run's findings (docs/findings.md); first those that differ "
                "between settings.</p>" + (f"<h3>Differ between settings</h3><ul>{diff}</ul>" if diff else "")
                + f"<h3>By run</h3><ul>{runs}</ul>")


def collect(res: Results) -> ExperimentFindings:
    """Every finished run's findings over its window, then what differs from the baseline's runs."""
    runs = []
    for r in res.runs:
        found = (findings_of_file(res.folder / r.run.file, win=r.figures.window)
                 if r.figures.window and r.run.file else [])
        if any(isinstance(flag, dict) and flag.get("kind") == WRAPAROUND for flag in r.run.flags or []):
            for f in found:
                if f.id == "autovacuum_spike":
                    f.text += " (an anti-wraparound vacuum, the run's flags say)"
        runs.append((r, found))
    return ExperimentFindings(runs, differences(res, runs))


def differences(res: Results, runs: list[tuple[RunResult, list[Finding]]]) -> list[Difference]:
    by_combo: dict[tuple, list[set[str]]] = {}
    for r, found in runs:
        by_combo.setdefault(combo(r.run.settings), []).append({f.id for f in found})
    base = by_combo.get(combo(res.baseline), [])
    if not base:
        return []
    labels = {f.key: (f.label, f.unit) for f in res.figures}
    out = []
    for row in res.rows:
        mine = by_combo.get(combo(row.settings))
        if row.settings == res.baseline or not mine:
            continue
        for fid in sorted(set().union(*mine, *base)):
            k, kb = sum(fid in s for s in mine), sum(fid in s for s in base)
            if (2 * k > len(mine)) == (2 * kb > len(base)):
                continue  # both mostly with it, or both mostly without: no difference to tell
            moved = sorted(((labels[key][0], ch.pct, labels[key][1]) for key, ch in row.changes.items()
                            if ch.verdict == "changed" and ch.pct is not None and key in labels),
                           key=lambda m: -abs(m[1]))[:MOVED_SHOWN]
            out.append(Difference(row.label, fid, k, len(mine), kb, len(base), moved))
    return out


def combo(settings: dict[str, str]) -> tuple:
    """A setting combination, whatever order its dict holds the names in."""
    return tuple(sorted(settings.items()))

