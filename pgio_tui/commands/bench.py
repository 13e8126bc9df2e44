"""`pgio-tui bench pgbench|pgio`: launch a workload against a server, watch and record it."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import check_overwrite, conninfo_of
from pgio_tui.commands.launched import run_session
from pgio_tui.errors import CliError
from pgio_tui.session import open_sampler
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.launch import make_pgbench, make_pgio


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.record, args.force)
    conninfo = conninfo_of(args)
    try:
        if args.workload == "pgbench":
            workload = make_pgbench(conninfo, args.pgbench_args, init_scale=args.init_scale,
                                    sampling_rate=args.sampling_rate)
            sampler = open_sampler(conninfo, args.interval)
        else:
            from pgio_tui.workloads.pgio import PgioConfig, parse_scale
            PgioConfig(schemas=args.schemas, scale=parse_scale(args.scale), sessions=args.sessions,
                       run_time=args.run_time, update_pct=args.update_pct, work_unit=args.work_unit,
                       update_work_unit=args.update_work_unit, setup=args.setup).check()  # before connecting
            sampler = open_sampler(conninfo, args.interval)
            workload = make_pgio(conninfo, sampler, schemas=args.schemas, scale=args.scale, sessions=args.sessions,
                                 run_time=args.run_time, update_pct=args.update_pct, work_unit=args.work_unit,
                                 update_work_unit=args.update_work_unit, setup=args.setup)
    except WorkloadError as exc:
        raise CliError(str(exc)) from None
    try:
        return run_session(sampler, workload, record=args.record, force=args.force, headless=args.headless,
                           theme=getattr(args, "theme", None), keep_recording=args.keep_recording)
    finally:
        sampler.close()
