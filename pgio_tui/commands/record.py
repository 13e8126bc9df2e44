"""`pgio-tui record [CONN] -o FILE [--listen [HOST:]PORT]`: headless recording, serving Prometheus
/metrics too with --listen (one more frame consumer); Ctrl-C, SIGTERM and SIGHUP close it cleanly."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of, open_exporter
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, open_sampler


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.output, args.force)
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    exporter = None
    try:
        exporter = open_exporter(args, sampler)  # before the file: a busy port records nothing
        session = Session(sampler, duration=args.duration, consumers=[exporter.on_frame] if exporter else [])
        session.record(args.output, args.force)
        run_headless(session, label=args.output, quiet=args.quiet)
    finally:
        if exporter is not None:
            exporter.close()
        sampler.close()
    return 0
