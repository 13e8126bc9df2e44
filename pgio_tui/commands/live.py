"""`pgio-tui [live] [CONN] [--interval S] [--record FILE] [--force] [--theme NAME] [--devices LIST]`."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of
from pgio_tui.session import open_sampler


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.record, args.force)
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    try:
        from pgio_tui.tui.live import run_monitor
        return run_monitor(sampler, record_path=args.record, force=args.force, theme=args.theme)
    finally:
        sampler.close()
