"""`pgio-tui bench pgbench|pgio`: launch a workload against a server, watch and record it."""

from __future__ import annotations

import argparse

from pgio_tui.cli import CliError, conninfo_of, open_sampler
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.session import run_session


def run_bench(args: argparse.Namespace) -> int:
    conninfo = conninfo_of(args)
    try:
        if args.workload == "pgbench":
            from pgio_tui.workloads.pgbench import PgbenchWorkload
            workload = PgbenchWorkload(conninfo, args.pgbench_args, init_scale=args.init_scale,
                                       sampling_rate=args.sampling_rate)
            sampler = open_sampler(conninfo, args.interval)
        else:
            from pgio_tui.workloads.pgio import PgioConfig, PgioWorkload, parse_scale
            config = PgioConfig(schemas=args.schemas, scale=parse_scale(args.scale), sessions=args.sessions,
                                run_time=args.run_time, update_pct=args.update_pct, work_unit=args.work_unit,
                                update_work_unit=args.update_work_unit, setup=args.setup)
            config.check()
            sampler = open_sampler(conninfo, args.interval)
            workload = PgioWorkload(conninfo, config, devices=data_devices(sampler))
    except WorkloadError as exc:
        raise CliError(str(exc)) from None
    try:
        return run_session(sampler, workload, record=args.record, force=args.force, headless=args.headless,
                           theme=getattr(args, "theme", None))
    finally:
        sampler.close()


def data_devices(sampler) -> list[str]:
    """Block devices under PGDATA, when the sampler reads this machine's /proc (else none)."""
    if getattr(sampler, "os_mode", None) != "local":
        return []
    return [dev for dev, role in sampler.device_roles.items() if "data" in role.split(",")]
