"""`pgio-tui record [CONN] -o FILE`: headless recording; Ctrl-C, SIGTERM and SIGHUP close it cleanly."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, open_sampler


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.output, args.force)
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    try:
        session = Session(sampler, duration=args.duration)
        session.record(args.output, args.force)
        run_headless(session, label=args.output, quiet=args.quiet)
    finally:
        sampler.close()
    return 0
