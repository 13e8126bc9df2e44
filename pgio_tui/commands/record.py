"""`pgio-tui record [CONN] -o FILE [--listen [HOST:]PORT]`: headless recording, serving Prometheus
/metrics too with --listen (one more frame consumer); Ctrl-C, SIGTERM and SIGHUP close it cleanly.
`--rotate PERIOD -o DIR [--retain AGE] [--retain-size SIZE]`: always on, one file per period
(store/rotation.py); `--print-systemd-unit`: the service that runs it (commands/systemd.py)."""

from __future__ import annotations

import argparse
import sys

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of, open_exporter
from pgio_tui.errors import CliError
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, open_sampler


def run(args: argparse.Namespace) -> int:
    rotation = _rotation(args)
    if args.print_systemd_unit:
        if args.password:
            raise CliError("-W asks for a password, which a service cannot answer: use ~/.pgpass or PGPASSFILE")
        from pgio_tui.commands.systemd import unit
        sys.stdout.write(unit(getattr(args, "argv", [])[1:]))
        return 0
    if not args.output:
        raise CliError("give the recording to write: -o FILE (or -o DIR with --rotate)")
    if rotation is None:
        check_overwrite(args.output, args.force)
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    exporter = None
    try:
        exporter = open_exporter(args, sampler)  # before the file: a busy port records nothing
        session = Session(sampler, duration=args.duration, consumers=[exporter.on_frame] if exporter else [])
        session.record(args.output, args.force, rotation=rotation)
        run_headless(session, label=args.output, quiet=args.quiet)
    finally:
        if exporter is not None:
            exporter.close()
        sampler.close()
    return 0


def _rotation(args: argparse.Namespace):
    """The Rotation of --rotate/--retain/--retain-size, None without --rotate."""
    if args.rotate is None:
        if args.retain is not None or args.retain_size is not None:
            raise CliError("--retain and --retain-size go with --rotate (one file per period in a folder)")
        if args.print_systemd_unit:
            raise CliError("--print-systemd-unit is for the always-on recorder: add --rotate 1h --retain 7d")
        return None
    if args.force:
        raise CliError("--force does not go with --rotate: new files never replace old ones")
    from pgio_tui.store.rotation import Rotation
    return Rotation(args.rotate, args.retain, args.retain_size)
