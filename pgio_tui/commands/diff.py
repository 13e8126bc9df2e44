"""`pgio-tui diff A B [C …] | DIR [--baseline FILE|NAME=V] [--from T] [--to T]`: compare recordings
and print the comparison, or open the diff screen. A folder of `record --rotate` files, and with
--from/--to every input, is compared as its window (one file copied for it).

Two recordings: the two-way comparison (analysis/compare.py); without --format the diff screen
opens (`pgio_tui.tui.diff_screen.run_diff_screen(comparison, args)`). Three or more, or an
experiment folder's runs: every run against the baseline (analysis/compare_many.py), printed
(the diff screen shows two runs; without --format the table is printed). The TUI is never loaded
with --format.
"""

from __future__ import annotations

import argparse
import os
import sys

from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.compare import Comparison, compare
from pgio_tui.analysis.formats import render, rich_renderables
from pgio_tui.errors import CliError
from pgio_tui.store.reader import RecordingError


def inputs_of(args: argparse.Namespace):
    """The recordings to compare (experiments.inputs.Inputs), or CliError."""
    from pgio_tui.experiments.inputs import InputError, gather
    paths = getattr(args, "inputs", None) or [args.a, args.b]
    try:
        got = gather(list(paths), getattr(args, "baseline", None))
    except InputError as exc:
        raise CliError(str(exc)) from None
    if len(got.files) < 2:
        where = f" ({', '.join(map(str, got.folders))} has {len(got.files)} finished run(s))" if got.folders else ""
        raise CliError(f"give two or more recordings, or an experiment folder with two or more finished runs{where}")
    return got


def load(args: argparse.Namespace) -> Comparison:
    got = inputs_of(args)
    if len(got.files) != 2:
        raise CliError("the diff screen compares two recordings")
    a, b = (got.files[1], got.files[0]) if got.baseline == 1 else (got.files[0], got.files[1])
    try:
        return compare(a, b, args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    import tempfile

    from pgio_tui.commands.common import windowed_paths
    with tempfile.TemporaryDirectory(prefix="pgio-tui-") as scratch:  # the windows, while they are read
        args.inputs = windowed_paths(list(getattr(args, "inputs", None) or [args.a, args.b]), args, scratch)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    got = inputs_of(args)
    fmt = args.format
    if len(got.files) > 2:
        return _many(got, args, fmt or "table")
    comparison = load(args)
    if fmt is None:
        from pgio_tui.tui.diff_screen import run_diff_screen
        return run_diff_screen(comparison, args)
    return _print(lambda: rich_renderables(comparison), lambda: render(comparison, fmt), fmt, None)


def _many(got, args: argparse.Namespace, fmt: str) -> int:
    from pgio_tui.analysis import formats_many
    from pgio_tui.analysis.compare_many import compare_many
    try:
        c = compare_many(got.files, args.align, got.baseline, got.labels)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    return _print(lambda: formats_many.rich_renderables(c), lambda: formats_many.render(c, fmt), fmt,
                  formats_many.table_width(c))


def _print(renderables, text, fmt: str, width: int | None) -> int:
    try:
        if fmt == "table" and sys.stdout.isatty():
            from rich.console import Console
            console = Console(width=max(width or 0, Console().width))
            for r in renderables():
                console.print(r)
        else:
            sys.stdout.write(text())
        sys.stdout.flush()
    except BrokenPipeError:  # `pgio-tui diff a b --format csv | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
