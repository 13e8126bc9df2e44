"""`pgio-tui export FILE [--format csv|json|openmetrics] [--metrics GLOB] [-o OUT]`: one row per tick
(openmetrics: Prometheus samples with timestamps, for backfilling)."""

from __future__ import annotations

import argparse
import os
import sys

from pgio_tui.commands.common import open_recording
from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.export import export
    rec = open_recording(args.file)
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        export(rec, out, fmt=args.format, metrics=args.metrics)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except BrokenPipeError:  # `pgio-tui export f | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        if args.output:
            out.close()
        rec.close()
    return 0
