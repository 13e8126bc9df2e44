"""`pgio-tui info FILE`: metadata, duration, ticks, checkpoints, events and devices of a recording."""

from __future__ import annotations

import argparse

from pgio_tui.commands.common import open_recording


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.export import describe
    rec = open_recording(args.file)
    try:
        print(describe(rec))
    finally:
        rec.close()
    return 0
