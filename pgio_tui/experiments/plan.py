"""The plan of an experiment and its folder: settings × values × repeats in a run order, kept in
DIR/experiment.json, rewritten (atomically) after every run so `experiment resume` knows what is done.

Layout: DIR/experiment.json (plan, original settings, what was changed, runs with their state, the
settings read back during them, their hygiene and flags) and DIR/runs/NNN-<label>.pgio, one ordinary
recording per run. Format 2 added per run `flags`, `hygiene`, `warmup`, `ran_s`, `page_cache`,
`statements` and per plan `reinit`, `dirty_wait_s`, `changes`; format 1 files read as before.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pgio_tui import private

PLAN_FILE = "experiment.json"
RUNS_DIR = "runs"
ORDERS = ("interleaved", "random", "sequential")
FORMAT = 2
READS = (1, 2)  # formats this version reads
PAGE_CACHE = "os.page_cache"
OS_SETTINGS = (PAGE_CACHE,)  # swept like settings, applied by the OS (experiments/page_cache.py)
# swept like settings, applied to the workload (experiments/workloads.py for_run); a new scale sets it up again
WORKLOAD_OPTIONS = ("pgbench.clients", "pgbench.jobs", "pgbench.scale", "pgio.update_pct", "pgio.sessions",
                    "pgio.scale", "pgio.work_unit")
WORKLOADS = ("pgbench", "pgio", "sql")  # experiments/workloads.py
MAX_RUNS = 2000  # runs of one plan (combinations × repeats): a day of 40 s runs; a folder's file holds no more
MAX_SETTINGS = 32  # settings swept at once
DIRTY_WAIT_S = 60.0  # default longest wait before a run for Dirty under the background threshold
# After a restart the caches are cold: 7,925 reads in pgio's first second, then ~500/s (issue 24).
# That much of the workload runs unrecorded first, by default; --restart-warmup changes it (0: none).
RESTART_WARMUP_S = 5.0
# --repeat auto: repeats to start with, the most by default, and the detectable change (in % of the
# baseline) under which a headline figure's "within noise" counts as settled
AUTO_START, AUTO_MAX_REPEAT, AUTO_TARGET_PCT = 2, 10, 10.0
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


class PlanError(ValueError):
    """A plan that cannot run, or a folder that holds no readable one: one line that says why."""


def parse_set(text: str) -> tuple[str, list[str]]:
    """`NAME=V1,V2,…` -> (name, values). Values are given to ALTER SYSTEM as they are."""
    name, sep, values = text.partition("=")
    name = name.strip().lower()
    if not sep or not _NAME.match(name):
        raise PlanError(f"--set {text!r}: give NAME=V1,V2,... (a setting name, then its values)")
    vals = [v.strip() for v in values.split(",")]
    if not vals or any(v == "" for v in vals):
        raise PlanError(f"--set {text!r}: empty value; give NAME=V1,V2,...")
    return name, vals  # a value given twice is A vs A: the same setting as two combinations (calibration)


@dataclass(slots=True)
class Run:
    index: int  # position in the run order, from 1
    settings: dict[str, str]  # the values this run sets
    repeat: int  # 1..N
    state: str = "planned"  # planned | running | done | interrupted | failed
    file: str | None = None  # relative to DIR
    applied: dict[str, str] = field(default_factory=dict)  # read back from pg_settings before it ran
    note: str = ""
    # Each flag: {"kind": autovacuum | autovacuum_wraparound | dirty_at_start | wal_files_created |
    # workload_failed | ended_early | unwatched, "text": one line, ...facts} (experiments/hygiene.py).
    flags: list[dict[str, Any]] = field(default_factory=list)
    hygiene: dict[str, Any] = field(default_factory=dict)  # CHECKPOINT, pgss reset, Dirty before the run
    # the unrecorded warm-up: s, after_restart, start_t, end_t, state
    warmup: dict[str, Any] = field(default_factory=dict)
    ran_s: float | None = None  # wall time of the recorded run
    page_cache: dict[str, Any] = field(default_factory=dict)  # the os.page_cache cap and its use at the end
    statements: list[dict[str, Any]] = field(default_factory=list)  # pg_stat_statements' top at the run's end
    arm: int | None = None  # its combination's place in Plan.combinations() (two alike when a value is given twice)

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings.items())


@dataclass(slots=True)
class Plan:
    sweep: dict[str, list[str]]
    repeat: int
    order: str
    workload: dict[str, Any]  # {"kind": "pgbench", "args": [...], "init_scale": N}
    target: dict[str, Any]  # {"lab": bool, "pg_version": N | None}
    warmup_s: float = 0.0
    restart_warmup_s: float = 0.0  # the unrecorded warm-up after a restart (a folder from before it: none)
    discard_first: bool = True
    seed: int = 0
    interval: float = 1.0  # seconds per tick of each recording
    runs: list[Run] = field(default_factory=list)
    originals: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> pg_settings facts before
    restored: bool | None = None
    reinit: bool = False  # the workload's setup (pgbench -i) before every run
    dirty_wait_s: float = DIRTY_WAIT_S  # longest wait before a run for Dirty under the background threshold
    changes: list[dict[str, Any]] = field(default_factory=list)  # what was set and restored, in order
    format: int = FORMAT
    auto: dict[str, Any] = field(default_factory=dict)  # --repeat auto: {"max_repeat": N, "budget_s": S | None}

    def combinations(self) -> list[dict[str, str]]:
        names = list(self.sweep)
        return [dict(zip(names, vals)) for vals in itertools.product(*(self.sweep[n] for n in names))]

    def make_runs(self) -> None:
        """The run order. interleaved: every combination once per round (A B A B); sequential: all
        repeats of one after another (A A B B); random: shuffled with the recorded seed."""
        combos = self.combinations()
        if self.order == "sequential":
            pairs = [(c, r) for c in combos for r in range(1, self.repeat + 1)]
        else:
            pairs = [(c, r) for r in range(1, self.repeat + 1) for c in combos]
            if self.order == "random":
                random.Random(self.seed).shuffle(pairs)
        arms = {id(c): i for i, c in enumerate(combos)}
        self.runs = [Run(i, dict(c), r, arm=arms[id(c)]) for i, (c, r) in enumerate(pairs, 1)]

    def varied(self) -> dict[str, list[str]]:
        """The swept settings with more than one value (a value given twice counts: A vs A); the
        others are fixed, said once in the plan and not in every label."""
        return {n: v for n, v in self.sweep.items() if len(v) > 1} or dict(self.sweep)

    def label_of(self, settings: dict[str, str]) -> str:
        varied = self.varied()
        return " ".join(f"{k}={v}" for k, v in settings.items() if k in varied)

    def arm_of(self, run: Run, combos: list[dict[str, str]] | None = None) -> int:
        """The combination a run belongs to: its recorded arm, else (older plans) the first alike
        (`combos`: self.combinations(), when the caller has them already)."""
        combos = self.combinations() if combos is None else combos
        if run.arm is not None and 0 <= run.arm < len(combos) and combos[run.arm] == run.settings:
            return run.arm
        return next((i for i, c in enumerate(combos) if c == run.settings), -1)

    def add_round(self) -> list[Run]:
        """--repeat auto: one more repeat of every combination, after the runs planned (in the plan's
        order: interleaved as planned, random shuffled with the seed and the round)."""
        combos = self.combinations()
        self.repeat += 1
        pairs = list(enumerate(combos))
        if self.order == "random":
            random.Random(self.seed * 1000 + self.repeat).shuffle(pairs)
        new = [Run(len(self.runs) + i, dict(c), self.repeat, arm=arm) for i, (arm, c) in enumerate(pairs, 1)]
        self.runs += new
        return new

    def pending(self) -> list[Run]:
        return [r for r in self.runs if r.state != "done"]

    def check(self) -> None:
        if not self.sweep:
            raise PlanError("give at least one --set NAME=V1,V2,...")
        if self.repeat < 1:
            raise PlanError("--repeat must be 1 or more")
        runs = math.prod(len(v) for v in self.sweep.values()) * self.repeat
        if runs > MAX_RUNS or len(self.sweep) > MAX_SETTINGS:
            raise PlanError(f"{runs:,} runs of {len(self.sweep)} settings: at most {MAX_RUNS:,} runs "
                            f"of {MAX_SETTINGS} settings")
        if self.order not in ORDERS:
            raise PlanError(f"--order: one of {', '.join(ORDERS)}")
        if self.warmup_s < 0 or self.restart_warmup_s < 0:
            raise PlanError("--warmup and --restart-warmup must be 0 or more seconds")
        if self.dirty_wait_s < 0:
            raise PlanError("--dirty-wait must be 0 or more seconds")
        if PAGE_CACHE in self.sweep:
            from pgio_tui.experiments.page_cache import PageCacheError, parse_size
            try:
                for value in self.sweep[PAGE_CACHE]:
                    parse_size(value)
            except PageCacheError as exc:
                raise PlanError(str(exc)) from None
        unknown = [n for n in self.sweep if n.startswith("os.") and n not in OS_SETTINGS]
        if unknown:
            raise PlanError(f"--set {unknown[0]}: the OS settings are {', '.join(OS_SETTINGS)}")
        if any(n.startswith(WORKLOADS) for n in self.sweep):
            from pgio_tui.experiments.workloads import check_options
            check_options(self.workload, self.sweep)

    def run_file(self, run: Run) -> str:
        label = re.sub(r"[^A-Za-z0-9_.=-]+", "_", "_".join(f"{k}={v}" for k, v in run.settings.items()))[:80]
        return f"{RUNS_DIR}/{run.index:03d}-{label}-r{run.repeat}.pgio"


def os_settings() -> tuple[str, ...]:
    """The swept names that are not server settings: the OS's and the workload's options."""
    return OS_SETTINGS + WORKLOAD_OPTIONS


def save(plan: Plan, folder: str | Path) -> None:
    """experiment.json, replaced atomically (a crash leaves the old one or the new one)."""
    private.write_text(Path(folder) / PLAN_FILE, json.dumps(asdict(plan), indent=2) + "\n")


def load(folder: str | Path) -> Plan:
    """The plan of an experiment folder, read as untrusted input (experiments/folder_check.py)."""
    from pgio_tui.experiments.folder_check import read_plan
    return read_plan(folder)
