"""Where an experiment is: run i of N, the settings of the run under way, its elapsed time, an ETA,
the flags so far, and one line per finished run. Textual-free and terminal-free: the headless
progress bar (commands/experiment_progress.py) and the TUI's experiment strip both draw it.

The ETA is measured, not promised: the mean wall time per finished run (settings, hygiene,
warm-up and the run itself) times the runs left, less the current run's elapsed time; before any
run has finished, the workload's own length (pgbench -T, pgio's run time, plus the warm-up)
stands in for it, and without that there is no ETA.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pgio_tui.experiments.plan import Plan, Run
from pgio_tui.format import DASH, clock, number
from pgio_tui.safe_text import printable

TERMINAL = ("done", "failed", "interrupted")


def nominal_s(plan: Plan) -> float | None:
    """The workload's own length in seconds when its arguments say it (pgbench -T, pgio run time)."""
    from pgio_tui.experiments.workloads import asked_s
    try:
        return asked_s(plan.workload)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(slots=True)
class Snapshot:
    """What a progress display shows at one moment."""

    index: int  # the run under way (1-based position in the run order), 0 before the first
    total: int
    done: int  # runs finished (done, failed or interrupted) so far, this session and before
    label: str  # the settings of the run under way, with its repeat
    phase: str  # "run", "warm-up", "discarded first run", "" between runs
    elapsed_s: float  # of the run under way
    expected_s: float | None  # its expected length
    eta_s: float | None  # until the experiment ends
    flags: int  # flags on finished runs so far

    @property
    def fraction(self) -> float:
        part = 0.0
        if self.phase == "run" and self.expected_s:
            part = min(0.99, self.elapsed_s / self.expected_s)
        return min(1.0, (self.done + part) / self.total) if self.total else 1.0

    def text(self) -> str:
        """`run 3/6 · backend_flush_after=512kB r1 · 0:12 of 0:30 · ETA 2:10 · 1 flag`."""
        return " · ".join(self.fields())

    def fields(self) -> list[str]:
        """The parts of text(), most important first, for a line that drops whole ones to fit."""
        head = f"run {self.index}/{self.total}" if self.index else f"0/{self.total} runs"
        parts = [head]
        if self.label:
            parts.append(self.label)
        if self.phase and self.phase != "run":
            parts.append(self.phase)
        if self.phase:
            parts.append(clock(self.elapsed_s) + (f" of {clock(self.expected_s)}" if self.expected_s else ""))
        parts.append(f"ETA {clock(self.eta_s)}" if self.eta_s is not None else f"ETA {DASH}")
        parts.append(f"{self.flags} flag{'s' if self.flags != 1 else ''}" if self.flags else "no flags")
        return parts


def run_label(run: Run) -> str:
    return printable(f"{run.label} r{run.repeat}")


def run_flag_texts(run: Run) -> list[str]:
    out = []
    for f in run.flags or []:
        text = (f.get("text") or f.get("kind")) if isinstance(f, dict) else f
        if text:
            out.append(printable(str(text)))
    return out


class Progress:
    """Follows a plan while the runner works through it: `begin(kind)` when a Session starts (the
    runner marks the recorded run "running" first), `finished()` returns the lines of runs that
    ended since the last call (the runner has stored their state and flags by then)."""

    def __init__(self, plan: Plan, folder: str | Path, clock_fn=time.monotonic):
        self.plan = plan
        self.folder = Path(folder)
        self.now = clock_fn
        self.started = clock_fn()
        self.reported = {r.index for r in plan.runs if r.state in TERMINAL}
        self.done_before = len(self.reported)  # finished in an earlier session (resume)
        self.run: Run | None = None
        self.phase = ""
        self.phase_started = self.started
        self.nominal = nominal_s(plan)
        self.first_start: float | None = None  # the first run's (or its warm-up's) start

    # --- events -------------------------------------------------------------------------------

    def begin(self, kind: str) -> None:
        """A Session starts: kind "run" (the run marked running), "warmup" or "discard"."""
        running = next((r for r in self.plan.runs if r.state == "running"), None)
        if kind == "run":
            self.run = running
        elif kind == "warmup":
            self.run = next((r for r in self.plan.runs if r.state not in TERMINAL), None)
        else:
            self.run = None
        self.phase = {"run": "run", "warmup": "warm-up", "discard": "discarded first run"}.get(kind, kind)
        self.phase_started = self.now()
        if kind != "discard" and self.first_start is None:
            self.first_start = self.phase_started  # the clock of the ETA: set-up and init are once only

    def end(self) -> None:
        self.phase = ""

    def finished(self) -> list[str]:
        """`run 3/6 done: backend_flush_after=512kB r1 · 0:30 · tps 1,234 · latency mean 2.31 ms`
        and `  flag: …` lines, for every run that ended since the last call."""
        out = []
        for run in self.plan.runs:
            if run.state in TERMINAL and run.index not in self.reported:
                self.reported.add(run.index)
                out.append(self._line(run))
                out += [f"  flag: {t}" for t in run_flag_texts(run)]
        return out

    def _line(self, run: Run) -> str:
        head = f"run {run.index}/{len(self.plan.runs)} {run.state}: {run_label(run)}"
        bits = []
        ran = run.ran_s
        if isinstance(ran, (int, float)):
            bits.append(clock(ran))
        if run.state == "done" and run.file:
            bits += self._figures(self.folder / run.file)
        if run.state != "done" and run.note:
            bits.append(printable(run.note))
        return " · ".join([head, *bits])

    @staticmethod
    def _figures(path: Path) -> list[str]:
        """The run's headline figures, as the report computes them (nothing when it cannot)."""
        try:
            from pgio_tui.experiments.figures import run_figures
            v = run_figures(path).values
        except Exception:  # noqa: BLE001 - a progress line must never stop the experiment
            return []
        out = []
        for key, label, unit in (("tps", "tps", "1/s"), ("lat_mean", "latency mean", "ms"),
                                 ("sql_elapsed", "elapsed", "s"), ("pgio_riops", "read IOPS", "1/s")):
            if v.get(key) is not None:
                out.append(f"{label} {number(v[key], unit)}" + (f" {unit}" if unit in ("ms", "s") else ""))
        return out

    # --- the state ------------------------------------------------------------------------------

    def finished_count(self) -> int:
        return sum(r.state in TERMINAL for r in self.plan.runs)

    def expected_run_s(self) -> float | None:
        if self.phase == "warm-up":
            return (self.run.warmup.get("s") if self.run is not None else None) or self.plan.warmup_s or None
        if self.phase == "run" and self.nominal:
            return self.nominal
        return None

    def eta_s(self) -> float | None:
        """Seconds until the end: the measured wall time per run finished in this session times
        the runs left; before one has finished, the nominal length per run."""
        left = len(self.plan.runs) - self.finished_count()
        if left <= 0:
            return 0.0
        finished_here = self.finished_count() - self.done_before
        elapsed_total = self.now() - (self.first_start if self.first_start is not None else self.started)
        in_run = self.now() - self.phase_started if self.phase == "run" else 0.0
        if finished_here > 0:
            per_run = elapsed_total / finished_here if self.phase != "run" else \
                (elapsed_total - in_run) / finished_here
        elif self.nominal:
            per_run = self.nominal + (self.plan.warmup_s or 0.0)
        else:
            return None
        return max(0.0, per_run * left - in_run)

    def snapshot(self) -> Snapshot:
        run = self.run
        return Snapshot(run.index if run is not None else 0, len(self.plan.runs), self.finished_count(),
                        run_label(run) if run is not None else "", self.phase, self.now() - self.phase_started,
                        self.expected_run_s(), self.eta_s(),
                        sum(len(r.flags or []) for r in self.plan.runs if r.state in TERMINAL))
