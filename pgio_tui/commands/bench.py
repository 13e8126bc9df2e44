"""`pgio-tui bench pgbench|pgio`: launch a workload against a server, watch and record it."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import check_overwrite, conninfo_of
from pgio_tui.commands.launched import run_session
from pgio_tui.errors import PROG, CliError, ConnectError
from pgio_tui.session import open_sampler
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.launch import make_pgbench, make_pgio


LAB_INIT_SCALE = 10  # bench --lab without --init-scale: pgbench's tables must exist


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.record, args.force)
    if getattr(args, "lab", False):
        return _on_lab(args)
    conninfo = conninfo_of(args)
    try:
        return _run(args, conninfo)
    except ConnectError as exc:
        raise ConnectError(f"{exc}; no server to use? --lab runs the workload on a throwaway lab cluster, e.g. "
                           f"{PROG} bench {args.workload} --lab" + (" -- -T 60" if args.workload == "pgbench" else "")
                           ) from None


def _on_lab(args: argparse.Namespace) -> int:
    """The workload on a throwaway lab cluster (demo's), removed afterwards."""
    from pgio_tui.commands.demo import DEMO_SETTINGS, _one_line, remove_lab, start_lab
    from pgio_tui.workloads.pg_binaries import ClusterError
    if args.conn or args.host or args.port or args.dbname:
        raise CliError("--lab makes its own server: give no CONN, -h, -p or -d with it")
    if args.workload == "pgbench" and args.init_scale is None:
        args.init_scale = LAB_INIT_SCALE
    cluster = None
    try:
        cluster = start_lab("bench", DEMO_SETTINGS)
        return _run(args, cluster.conninfo())
    except ClusterError as exc:
        raise CliError(_one_line(str(exc))) from None
    finally:
        remove_lab("bench", cluster)


def _run(args: argparse.Namespace, conninfo: str) -> int:
    try:
        if args.workload == "pgbench":
            workload = make_pgbench(conninfo, args.pgbench_args, init_scale=args.init_scale,
                                    sampling_rate=args.sampling_rate)
            sampler = open_sampler(conninfo, args.interval)
        else:
            from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale
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
                           theme=getattr(args, "theme", None), keep_recording=args.keep_recording,
                           listen=args if args.listen else None)
    finally:
        sampler.close()
