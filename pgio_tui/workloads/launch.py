"""Building a workload from options: shared by `pgio-tui bench` and the TUI's workload dialog.

One place turns options into a PgbenchWorkload or a PgioWorkload, so the command line and the
dialog launch the same thing; the dialog's text fields are parsed here too (Textual-free, one-line
WorkloadError messages the dialog shows as they are).
"""

from __future__ import annotations

import shlex
from typing import Any

from pgio_tui.interfaces import SamplerLike
from pgio_tui.workloads.base import Workload, WorkloadError

PGBENCH_BUILTINS = ("tpcb-like", "simple-update", "select-only")
# pgio's defaults (pgio.conf's meanings, pgio.md §2): `bench pgio`, the dialog and PgioConfig use these.
PGIO_DEFAULTS: dict[str, Any] = {"schemas": 1, "scale": "64M", "sessions": 1, "run_time": 60, "update_pct": 0,
                                 "work_unit": 255, "update_work_unit": 8, "setup": True}


def make_pgbench(conninfo: str, pgbench_args: list[str], *, init_scale: int | None = None,
                 sampling_rate: float | None = None) -> Workload:
    from pgio_tui.workloads.pgbench import PgbenchWorkload
    return PgbenchWorkload(conninfo, pgbench_args, init_scale=init_scale, sampling_rate=sampling_rate)


def make_pgio(conninfo: str, sampler: SamplerLike, *, schemas: int, scale: str | int, sessions: int, run_time: float,
              update_pct: int, work_unit: int, update_work_unit: int, setup: bool) -> Workload:
    """`scale` as pgio takes it (blocks, or 64M / 1G); the sampler tells which devices hold PGDATA."""
    from pgio_tui.workloads.pgio import PgioWorkload
    from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale
    config = PgioConfig(schemas=schemas, scale=parse_scale(scale), sessions=sessions, run_time=run_time,
                        update_pct=update_pct, work_unit=work_unit, update_work_unit=update_work_unit, setup=setup)
    config.check()
    return PgioWorkload(conninfo, config, devices=data_devices(sampler))


def data_devices(sampler: SamplerLike) -> list[str]:
    """Block devices under PGDATA, when the sampler reads this machine's /proc (else none)."""
    if sampler.os_mode != "local":
        return []
    return [dev for dev, role in sampler.device_roles.items() if "data" in role.split(",")]


def sampler_conninfo(sampler: SamplerLike) -> str | None:
    """The conninfo the sampler connected with: a launched workload goes to the same server."""
    return sampler.pg.conninfo


# --- the dialog's fields ------------------------------------------------------------------------


def _int(fields: dict[str, str], key: str, label: str, *, low: int = 1) -> int:
    text = str(fields.get(key, "")).strip()
    try:
        value = int(text)
    except ValueError:
        raise WorkloadError(f"{label}: give a whole number, not {text!r}") from None
    if value < low:
        raise WorkloadError(f"{label}: must be {low} or more")
    return value


def _optional_int(fields: dict[str, str], key: str, label: str) -> int | None:
    """_int, or None when the field is empty."""
    return _int(fields, key, label) if str(fields.get(key, "")).strip() else None


def pgbench_args(fields: dict[str, str]) -> tuple[list[str], int | None]:
    """clients, threads, duration, builtin, extra (shell-like words, never run by a shell) and
    init_scale (empty: no `pgbench -i`) -> (pgbench's argv after the program, init scale)."""
    clients = _int(fields, "clients", "clients")
    threads = _int(fields, "threads", "threads")
    duration = _int(fields, "duration", "duration (s)")
    init_scale = _optional_int(fields, "init_scale", "init scale")
    if threads > clients:
        raise WorkloadError(f"threads ({threads}) must not exceed clients ({clients})")
    builtin = str(fields.get("builtin") or "tpcb-like")
    if builtin not in PGBENCH_BUILTINS:
        raise WorkloadError(f"script: one of {', '.join(PGBENCH_BUILTINS)}")
    try:
        extra = shlex.split(str(fields.get("extra", "")))
    except ValueError as exc:
        raise WorkloadError(f"extra args: {exc}") from None
    return ["-c", str(clients), "-j", str(threads), "-T", str(duration), "-b", builtin, *extra], init_scale


def pgio_options(fields: dict[str, str]) -> dict[str, Any]:
    """schemas, scale, sessions, run_time, update_pct, work_unit, update_work_unit, setup -> the
    keyword arguments of make_pgio (checked by it)."""
    from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale
    default = PgioConfig()
    run_time = _int(fields, "run_time", "run time (s)")
    update_pct = _int(fields, "update_pct", "update %", low=0)
    uwu = _optional_int(fields, "update_work_unit", "update work unit")
    options: dict[str, Any]
    options = {"schemas": _int(fields, "schemas", "schemas"), "scale": str(fields.get("scale", "")).strip(),
               "sessions": _int(fields, "sessions", "sessions"), "run_time": float(run_time),
               "update_pct": update_pct, "work_unit": _int(fields, "work_unit", "work unit"),
               "update_work_unit": uwu if uwu is not None else default.update_work_unit,
               "setup": bool(fields.get("setup", True))}
    PgioConfig(**{**options, "scale": parse_scale(options["scale"])}).check()  # said before connecting
    return options


def from_fields(kind: str, fields: dict[str, str], sampler: SamplerLike) -> Workload:
    """The dialog's fields -> a workload on the sampler's server, not started; WorkloadError says
    what is wrong in one line."""
    if kind not in ("pgbench", "pgio"):
        raise WorkloadError(f"unknown workload {kind!r}")
    pgbench = pgbench_args(fields) if kind == "pgbench" else None  # the user's errors first
    options = pgio_options(fields) if kind == "pgio" else {}
    conninfo = sampler_conninfo(sampler)
    if conninfo is None:
        raise WorkloadError("no connection to launch a workload on")
    if pgbench is not None:
        args, init_scale = pgbench
        return make_pgbench(conninfo, args, init_scale=init_scale)
    return make_pgio(conninfo, sampler, **options)
