"""`pgio-tui serve [CONN] --listen [HOST:]PORT`: the Prometheus endpoint without a recording.

A Session with no recorder whose one frame consumer is the exporter, run by the headless driver;
Ctrl-C, SIGTERM and SIGHUP stop it.
"""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import conninfo_of, devices_of, open_exporter
from pgio_tui.errors import PROG, say
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, open_sampler


def run(args: argparse.Namespace) -> int:
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    exporter = None
    try:
        exporter = open_exporter(args, sampler)
        session = Session(sampler, consumers=[exporter.on_frame])
        why = run_headless(session, label=exporter.url, quiet=args.quiet)
        say(f"{PROG}: served {exporter.ticks} ticks ({why})")
    finally:
        if exporter is not None:
            exporter.close()
        sampler.close()
    return 0
