"""An experiment's workload: parsed once from the command line into a plain dict kept in the plan
(so `resume` runs the same), made into a Workload per run, and set up once (or per run, --reinit).

  pgbench -- ARGS                   {"kind": "pgbench", "args": [...], "init_scale": N | None}
  pgio [--scale 64M --run-time 60 …] {"kind": "pgio", "config": {PgioConfig fields}}
  sql 'STATEMENT' [--times N] [--before SQL]   {"kind": "sql", "statement": …, "times": N, "before": …}
"""

from __future__ import annotations

import argparse
import os
import subprocess
from dataclasses import asdict
from typing import Any

from pgio_tui.experiments.plan import WORKLOADS as KINDS
from pgio_tui.experiments.plan import PlanError
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.launch import PGIO_DEFAULTS



class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, as every other bad input
        raise PlanError(f"{self.prog}: {message}")


def _pgio_parser() -> _Parser:
    p = _Parser(prog="pgio", add_help=False)
    d = PGIO_DEFAULTS
    p.add_argument("--schemas", type=int, default=d["schemas"])
    p.add_argument("--scale", default=d["scale"])
    p.add_argument("--sessions", type=int, default=d["sessions"])
    p.add_argument("--run-time", type=float, default=float(d["run_time"]))
    p.add_argument("--update-pct", type=int, default=d["update_pct"])
    p.add_argument("--work-unit", type=int, default=d["work_unit"])
    p.add_argument("--update-work-unit", type=int, default=d["update_work_unit"])
    return p


def _sql_parser() -> _Parser:
    p = _Parser(prog="sql", add_help=False)
    p.add_argument("statement")
    p.add_argument("--times", type=int, default=1)
    p.add_argument("--before", default=None)
    return p


def parse(kind: str, words: list[str], init_scale: int | None) -> dict[str, Any]:
    """The plan's workload from WORKLOAD and its words; PlanError with what to do."""
    if kind == "pgbench":
        if not words:
            raise PlanError("give the workload: pgbench -- PGBENCH-ARGS (e.g. -- -c 4 -T 60)")
        return {"kind": "pgbench", "args": list(words), "init_scale": init_scale}
    if kind == "pgio":
        from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale
        a = _pgio_parser().parse_args(words)
        try:
            config = PgioConfig(schemas=a.schemas, scale=parse_scale(a.scale), sessions=a.sessions,
                                run_time=a.run_time, update_pct=a.update_pct, work_unit=a.work_unit,
                                update_work_unit=a.update_work_unit, setup=False)
            config.check()
        except WorkloadError as exc:
            raise PlanError(f"pgio: {exc}") from None
        return {"kind": "pgio", "config": {k: v for k, v in asdict(config).items() if k != "setup"}}
    if kind == "sql":
        a = _sql_parser().parse_args(words)
        if a.times < 1:
            raise PlanError("sql --times must be 1 or more")
        if not a.statement.strip():
            raise PlanError("sql: give the statement to time, e.g. sql 'INSERT INTO t SELECT ...'")
        return {"kind": "sql", "statement": a.statement, "times": a.times, "before": a.before}
    raise PlanError(f"workload {kind!r}: one of {', '.join(KINDS)}")


def asked_s(spec: dict[str, Any]) -> float | None:
    """How long one run was asked to last (for the "ended early" flag); None when unknown."""
    if spec["kind"] == "pgbench":
        from pgio_tui.workloads.pgbench_invocation import option_value
        value = option_value(spec["args"], "T", "--time")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None
    if spec["kind"] == "pgio":
        return float(spec["config"]["run_time"])
    return None


def make(spec: dict[str, Any], conninfo: str, *, warmup_s: float | None = None,
         devices: list[str] | None = None) -> Workload:
    """One run's Workload; `warmup_s`: the same workload, shortened to that many seconds."""
    kind = spec["kind"]
    if kind == "pgbench":
        from pgio_tui.workloads.pgbench import PgbenchWorkload
        args = list(spec["args"])
        if warmup_s is not None:
            args = with_duration(args, warmup_s)
        return PgbenchWorkload(conninfo, args)
    if kind == "pgio":
        from pgio_tui.workloads.pgio import PgioWorkload
        from pgio_tui.workloads.pgio_config import PgioConfig
        config = PgioConfig(**spec["config"], setup=False)
        if warmup_s is not None:
            config.run_time = max(1.0, float(warmup_s))
        return PgioWorkload(conninfo, config, devices=devices)
    if kind == "sql":
        from pgio_tui.workloads.sql import SqlWorkload
        return SqlWorkload(conninfo, spec["statement"], times=1 if warmup_s is not None else spec["times"],
                           before=spec.get("before"))
    raise PlanError(f"workload {kind!r}: one of {', '.join(KINDS)}")


def with_duration(args: list[str], seconds: float) -> list[str]:
    """pgbench's args with its length (-T/-t and their long forms) replaced by -T seconds."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-T", "-t", "--time", "--transactions"):
            skip = True
            continue
        if a.startswith(("--time=", "--transactions=")) or (a[:2] in ("-T", "-t") and len(a) > 2):
            continue
        out.append(a)
    return [*out, "-T", str(max(1, round(seconds)))]


def setup(spec: dict[str, Any], conninfo: str, say=lambda text: None, progress=None) -> None:
    """Once before the runs (and before each with --reinit): pgbench -i -s N, or pgio's tables.
    Not part of any recording. `progress(label, fraction)` is told how far it is (fraction None:
    it ended); without it, `say` gets one line when it starts."""
    if spec["kind"] == "pgbench":
        scale = spec.get("init_scale")
        if not scale:
            return
        from collections import deque
        from pgio_tui.workloads.pgbench_invocation import connection, find_pgbench
        from pgio_tui.workloads.pgbench_output import init_percent
        label = f"pgbench -i -s {scale}"
        if progress is None:
            say(label)
        env, conn_args = connection(conninfo)
        proc = subprocess.Popen([str(find_pgbench()), "-i", "-s", str(scale), *conn_args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
                                env={**os.environ, **env})
        last: deque[str] = deque(maxlen=20)
        for line in proc.stderr or ():  # a pipe (stderr=PIPE)
            pct = init_percent(line.rstrip("\n"))
            if pct is None:
                last.append(line.strip())
            elif progress is not None:
                progress(label, pct)
        rc = proc.wait()
        if progress is not None:
            progress(label, None)
        if rc != 0:
            raise WorkloadError(f"pgbench -i failed: {([x for x in last if x] or ['no message'])[-1]}")
    elif spec["kind"] == "pgio":
        from pgio_tui.workloads.pgio import PgioWorkload
        from pgio_tui.workloads.pgio_config import PgioConfig
        config = PgioConfig(**{**spec["config"], "run_time": 1.0}, setup=True)
        label = f"pgio setup: {config.schemas} table(s) of {config.scale} blocks"
        if progress is None:
            say(label)
        w = PgioWorkload(conninfo, config)
        w.start()
        while not w.wait(0.2):
            if progress is not None and w.phase == "setup" and w.progress is not None:
                progress(label, w.progress)
        if progress is not None:
            progress(label, None)
        if w.error:
            raise WorkloadError(f"pgio setup failed: {w.error}")
