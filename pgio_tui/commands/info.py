"""`pgio-tui info FILE|DIR`: what a recording holds (metadata, duration, ticks, checkpoints, events,
devices), or the runs of an experiment folder (order, settings, state, flags, recording, duration)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.commands.common import open_recording
from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    if os.path.isdir(args.file):
        return _experiment(args.file)
    from pgio_tui.store.export import describe
    rec = open_recording(args.file)
    try:
        print(describe(rec))
    finally:
        rec.close()
    return 0


def _experiment(folder: str) -> int:
    from pgio_tui.experiments.listing import describe
    from pgio_tui.experiments.plan import PlanError, load
    try:
        plan = load(folder)
    except PlanError as exc:
        raise CliError(f"{exc} (info takes a recording or an experiment folder)") from None
    print(describe(plan, folder))
    return 0
