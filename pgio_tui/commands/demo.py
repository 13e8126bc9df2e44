"""`pgio-tui demo`: a throwaway lab cluster, a pgbench load that shows checkpoints and writeback
within a minute, and the live view. Nothing is left running afterwards, whatever ends it.

The cluster is made small on purpose: shared_buffers far below the data, so backends and the
background writer write; checkpoint_timeout 30 s and a small max_wal_size, so checkpoints come
often (WAL-triggered ones in between); on a disk-backed directory (not tmpfs, where there is no writeback to see).
"""

from __future__ import annotations

import argparse
import math
import re
import signal
import sys
import tempfile
from pathlib import Path

from pgio_tui.commands.common import check_overwrite
from pgio_tui.commands.launched import run_session
from pgio_tui.errors import PROG, CliError
from pgio_tui.errors import say as _say
from pgio_tui.session import open_sampler
from pgio_tui.workloads.base import WorkloadError

DEMO_SCALE = 10  # pgbench scale by default: ~160 MB of tables
DEMO_ARGS = ["-c", "4", "-j", "2"]
DEMO_SETTINGS = {
    "shared_buffers": "32MB",
    "checkpoint_timeout": "30s",
    "max_wal_size": "256MB",  # a WAL-triggered checkpoint every ~10 s on a laptop, timed ones at 30 s
    "min_wal_size": "64MB",
    "log_autovacuum_min_duration": "0",
}
FOREVER_S = 365 * 24 * 3600  # pgbench needs a -T; the user ends the demo


class _Interrupted(Exception):
    """SIGTERM or SIGHUP arrived before the session had its own handlers."""


def run(args: argparse.Namespace) -> int:
    from pgio_tui.workloads.pg_binaries import ClusterError
    from pgio_tui.workloads.pgbench import PgbenchWorkload
    from pgio_tui.workloads.pgbench_invocation import find_pgbench

    check_overwrite(args.record, args.force)  # before the cluster is made
    previous = _raise_on_signals()
    cluster = None
    sampler = None
    try:
        pgbench = find_pgbench()
        cluster = start_lab("demo", DEMO_SETTINGS)
        conninfo = cluster.conninfo()
        sampler = open_sampler(conninfo, 1.0)
        seconds = math.ceil(args.duration) if args.duration else FOREVER_S
        scale = getattr(args, "scale", None) or DEMO_SCALE
        workload = PgbenchWorkload(conninfo, [*DEMO_ARGS, "-T", str(seconds)], init_scale=scale,
                                   pgbench=pgbench)
        _say(f"{PROG}: demo: pgbench -i -s {scale}, then pgbench {' '.join(DEMO_ARGS)} "
             f"for {'%d s' % seconds if args.duration else 'as long as you watch'}")
        return run_session(sampler, workload, record=args.record, force=args.force, headless=args.headless)
    except (ClusterError, WorkloadError) as exc:
        raise CliError(_one_line(str(exc))) from None
    except (_Interrupted, KeyboardInterrupt):
        _say(f"{PROG}: demo interrupted")
        return 130
    finally:
        if sampler is not None:
            sampler.close()
        remove_lab("demo", cluster)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def start_lab(what: str, settings: dict, bindir=None):
    """A started lab cluster (private, removed by remove_lab) for `what`: demo, bench --lab,
    experiment --lab; its steps on a headless bar."""
    from pgio_tui.headless import SetupBar
    from pgio_tui.workloads.cluster import Cluster
    cluster = Cluster(bindir=bindir, settings=settings, name=f"pgio-{what}", temp_dir=_demo_dir())
    steps = SetupBar(f"{PROG}: {what}: lab cluster")
    try:
        _say(f"{PROG}: {what}: starting a lab cluster (PostgreSQL {cluster.version}) in {cluster.datadir}")
        steps.update(0.0, "initdb")
        cluster.init()
        steps.update(0.7, "starting")
        cluster.start()
        steps.update(0.9, "pg_stat_statements")
        _statement_stats(cluster)
        steps.done()
    except BaseException:
        steps.done(complete=False)
        remove_lab(what, cluster)
        raise
    return cluster


def remove_lab(what: str, cluster) -> None:
    from pgio_tui.workloads.pg_binaries import ClusterError
    if cluster is not None:
        _say(f"{PROG}: {what}: removing the lab cluster")
        try:
            cluster.destroy()
        except ClusterError as exc:
            _say(f"{PROG}: {what}: {exc}")


def _one_line(message: str) -> str:
    """A multi-line error as one line: its first line and the server's FATAL line, if any (the
    directory it points to is removed by the time the user reads it)."""
    lines = message.splitlines() or [""]
    fatal = next((x[x.index("FATAL"):] for x in lines[1:] if "FATAL" in x), None)
    first = re.sub(r" \(see [^)]*\)|[;:] last log lines:?$", "", lines[0]).rstrip(";: ")
    return f"{first}: {fatal}" if fatal else first


def _statement_stats(cluster) -> None:
    """pg_stat_statements, so the Latency pane keeps the server's view after pgbench ends."""
    import psycopg
    try:
        with cluster.connect() as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    except psycopg.Error:
        pass  # a build without contrib: the demo runs without it


def _raise_on_signals() -> dict:
    """Until the session installs its own handlers, SIGTERM/SIGHUP unwind (and clean up) like Ctrl-C."""
    def handler(signum, _frame):
        raise _Interrupted(signal.Signals(signum).name)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        previous[sig] = signal.signal(sig, handler)
    return previous


def _demo_dir() -> Path:
    """Where the lab cluster's private folder goes: on a real disk (tmpfs shows no writeback)."""
    from pgio_tui.sources.disks import devices_for_path
    candidates = [tempfile.gettempdir(), "/var/tmp", "/tmp"]
    for d in candidates:
        if Path(d).is_dir() and devices_for_path(d):
            return Path(d)
    print(f"{PROG}: demo: no disk-backed temporary directory found; using {candidates[0]} (no writeback to "
          "see if it is tmpfs)", file=sys.stderr)
    return Path(candidates[0])
