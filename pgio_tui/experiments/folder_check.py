"""An experiment folder is untrusted input exactly like a recording (people send them to each
other): experiment.json is read here and only here, with limits on its size, nesting, string
lengths, number of runs and size of the sweep, every field of the plan and of each run checked for
its type, and each run's recording confined to the folder's runs/ (a relative name, no `..`, no
symlink out). Anything else is one PlanError line. Statement texts pass the scrubber on the way in,
so a file written before it shows no password either."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import fields
from pathlib import Path
from typing import Any

from pgio_tui.experiments.plan import (FORMAT, MAX_RUNS, MAX_SETTINGS, ORDERS, PLAN_FILE, READS, RUNS_DIR, Plan,
                                      PlanError, Run)
from pgio_tui.secrets import scrub_statement

MAX_FILE_BYTES = 32 << 20  # 2,000 runs with their top statements, hygiene and flags take ~12 MB
MAX_DEPTH = 8  # nesting of JSON values (a run's flags and facts are 3 deep)
MAX_TEXT = 16384  # characters of one string (a statement is stored cut at 200)
MAX_NUMBER = 1e18  # beyond it no figure of ours is meaningful
STATES = ("planned", "running", "done", "interrupted", "failed")
_RUN_FILE = re.compile(rf"{RUNS_DIR}/[^/\x00]{{1,255}}")


def read_plan(folder: str | Path) -> Plan:
    """The plan in `folder`, checked; PlanError (one line) for anything this version cannot trust."""
    path = Path(folder) / PLAN_FILE
    try:
        data = _read_json(path)
        plan = _plan(data)
        _confine(Path(folder), plan)
    except FileNotFoundError:
        raise PlanError(f"{folder}: no {PLAN_FILE}; is it an experiment folder?") from None
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    except OSError as exc:
        raise PlanError(f"{path}: cannot read it ({exc.strerror or type(exc).__name__})") from None
    return plan


def _read_json(path: Path) -> Any:
    """The JSON of a regular file of at most MAX_FILE_BYTES (never a FIFO to block on)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PlanError("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise PlanError(f"{st.st_size / 2**20:.0f} MB: larger than any plan ({MAX_FILE_BYTES >> 20} MB at most)")
        raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise PlanError(f"larger than any plan ({MAX_FILE_BYTES >> 20} MB at most)")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except PlanError:
        raise
    except RecursionError:
        raise PlanError(f"nested deeper than a plan ({MAX_DEPTH} levels at most)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise PlanError(f"not a readable experiment plan ({type(exc).__name__})") from None
    _bounded(data, 0)
    return data


def _no_constant(name: str) -> None:
    raise PlanError(f"{name} is not a number a plan holds")


def _bounded(v: Any, depth: int) -> None:
    """Nesting, string lengths and numbers within the limits, everywhere in the file."""
    if depth > MAX_DEPTH:
        raise PlanError(f"nested deeper than a plan ({MAX_DEPTH} levels at most)")
    if isinstance(v, str):
        if len(v) > MAX_TEXT:
            raise PlanError(f"a text of {len(v):,} characters (at most {MAX_TEXT:,})")
    elif isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)):
        if not math.isfinite(v) or abs(v) > MAX_NUMBER:
            raise PlanError("a number out of range")
    elif isinstance(v, dict):
        for k, x in v.items():
            _bounded(k, depth + 1)
            _bounded(x, depth + 1)
    elif isinstance(v, list):
        for x in v:
            _bounded(x, depth + 1)


def _plan(data: Any) -> Plan:
    if not isinstance(data, dict):
        raise PlanError("not a readable experiment plan (not an object)")
    if data.get("format") not in READS:
        raise PlanError(f"format {str(data.get('format'))[:20]!r}, this version reads {' and '.join(map(str, READS))}")
    _known(data, Plan, "the plan")
    sweep = data.get("sweep")
    if not isinstance(sweep, dict) or not sweep or not all(
            isinstance(n, str) and isinstance(vals, list) and vals and all(isinstance(x, str) for x in vals)
            for n, vals in sweep.items()):
        raise PlanError("sweep: not settings with lists of values")
    if len(sweep) > MAX_SETTINGS:
        raise PlanError(f"a sweep of {len(sweep)} settings: at most {MAX_SETTINGS}")
    combos = math.prod(len(vals) for vals in sweep.values())
    repeat = _int(data, "repeat", 1, MAX_RUNS)
    if combos * repeat > MAX_RUNS:
        raise PlanError(f"a sweep of {combos:,} combinations × {repeat} repeats: at most {MAX_RUNS:,} runs")
    if data.get("order") not in ORDERS:
        raise PlanError(f"order: one of {', '.join(ORDERS)}")
    for name in ("workload", "target", "originals", "auto"):
        _typed(data, name, dict)
    for name in ("changes", "runs"):
        _typed(data, name, list)
    for name in ("discard_first", "reinit"):
        _typed(data, name, bool)
    _typed(data, "restored", (bool, type(None)))
    for name, low, high in (("warmup_s", 0, MAX_NUMBER), ("restart_warmup_s", 0, MAX_NUMBER),
                            ("dirty_wait_s", 0, MAX_NUMBER),
                            ("interval", 1e-3, 86400)):
        _num(data, name, low, high)
    _int(data, "seed", -MAX_NUMBER, MAX_NUMBER)
    runs = data.pop("runs", [])
    if len(runs) > MAX_RUNS:
        raise PlanError(f"{len(runs):,} runs: at most {MAX_RUNS:,}")
    try:
        plan = Plan(**data)
        plan.runs = [_run(r) for r in runs]
    except TypeError:  # a required field is missing
        raise PlanError("not a readable experiment plan (a field is missing)") from None
    plan.format = FORMAT  # saved again with this version's fields
    return plan


def _run(r: Any) -> Run:
    if not isinstance(r, dict):
        raise PlanError("a run that is not an object")
    _known(r, Run, "a run")
    _int(r, "index", 1, MAX_RUNS)
    _int(r, "repeat", 1, MAX_RUNS)
    settings = r.get("settings")
    if not isinstance(settings, dict) or not all(isinstance(v, str) for v in settings.values()):
        raise PlanError("a run's settings: not names with values")
    if r.get("state", "planned") not in STATES:
        raise PlanError(f"a run's state: one of {', '.join(STATES)}")
    file = r.get("file")
    if file is not None and not (isinstance(file, str) and _RUN_FILE.fullmatch(file) and "/.." not in file
                                 and not file.endswith("/.")):
        raise PlanError(f"a run's file must be a name in {RUNS_DIR}/ of the folder")
    for name in ("applied", "hygiene", "warmup", "page_cache"):
        _typed(r, name, dict)
    for name in ("flags", "statements"):
        _typed(r, name, list)
    _typed(r, "note", str)
    _num(r, "ran_s", 0, MAX_NUMBER, none=True)
    if r.get("arm") is not None:
        _int(r, "arm", 0, MAX_RUNS)
    for st in r.get("statements") or []:
        if isinstance(st, dict) and isinstance(st.get("query"), str):
            st["query"] = scrub_statement(st["query"])
    return Run(**r)


def _confine(folder: Path, plan: Plan) -> None:
    """runs/ is a folder of this one (not a symlink elsewhere) and every run's file stays in it."""
    runs = folder / RUNS_DIR
    if not (runs.exists() or runs.is_symlink()):
        return
    if not stat.S_ISDIR(runs.lstat().st_mode):
        raise PlanError(f"{RUNS_DIR} is not a folder of the experiment")
    inside = runs.resolve()
    for run in plan.runs:
        if run.file and (folder / run.file).resolve().parent != inside:
            raise PlanError(f"run {run.index}: its file leads out of {RUNS_DIR}/")


def _known(d: dict, cls, what: str) -> None:
    names = {f.name for f in fields(cls)}
    unknown = [k for k in d if k not in names]
    if unknown:
        raise PlanError(f"{what} has a field this version does not know: {str(unknown[0])[:40]!r}")


def _typed(d: dict, name: str, kinds) -> None:
    if name in d and not isinstance(d[name], kinds):
        raise PlanError(f"{name}: not the kind of value a plan holds")


def _int(d: dict, name: str, low: float, high: float) -> int:
    v = d.get(name)
    if name in d and not (type(v) is int and low <= v <= high):
        raise PlanError(f"{name}: a whole number from {low:g} to {high:g}")
    return v if type(v) is int else 1


def _num(d: dict, name: str, low: float, high: float, none: bool = False) -> None:
    v = d.get(name)
    if name not in d or (v is None and none):
        return
    if not (isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high):
        raise PlanError(f"{name}: a number from {low:g} to {high:g}")
