"""`pgio-tui export FILE|DIR [--format csv|json|openmetrics] [--metrics GLOB] [--from T] [--to T] [-o OUT]`:
one row per tick (openmetrics: Prometheus samples with timestamps, for backfilling); `--backends`:
one row per recorded backend per tick (csv or json); `--io`: one row per pg_stat_io row per tick. DIR: a folder of `record --rotate` files."""

from __future__ import annotations

import argparse
import sys

from pgio_tui.commands.common import open_recording, window_of
from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.export import export
    rows_option = "--backends" if args.backends else "--io" if args.io else None
    if args.backends and args.io:
        raise CliError("--backends and --io are two exports: give one")
    if rows_option:
        if args.format not in ("csv", "json"):
            raise CliError(f"{rows_option} writes csv or json, not {args.format}; use --format csv or --format json")
        if args.metrics:
            raise CliError(f"{rows_option} writes every column; leave out --metrics")
    rec = open_recording(args.file, args)
    try:
        start, end = window_of(rec, args)
    except CliError:
        rec.close()
        raise
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        if args.backends:
            from pgio_tui.export.backends import export_backends
            export_backends(rec, out, fmt=args.format, start_tick=start, end_tick=end)
        elif args.io:
            from pgio_tui.export.io_rows import export_io
            export_io(rec, out, fmt=args.format, start_tick=start, end_tick=end)
        else:
            export(rec, out, fmt=args.format, metrics=args.metrics, start_tick=start, end_tick=end)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    finally:
        if args.output:
            out.close()
        rec.close()
    return 0
