"""`pgio-tui diff A B`: compare two recordings and print the comparison, or open the diff screen.

With --format the comparison is printed (table, markdown, csv, json) and the TUI is never loaded.
Without it the diff screen opens (`pgio_tui.tui.diff_screen.run_diff_screen(comparison, args)`).
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


def load(args: argparse.Namespace) -> Comparison:
    for path in (args.a, args.b):
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")
    try:
        return compare(args.a, args.b, args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    comparison = load(args)
    fmt = args.format
    if fmt is None:
        from pgio_tui.tui.diff_screen import run_diff_screen
        return run_diff_screen(comparison, args)
    try:
        if fmt == "table" and sys.stdout.isatty():
            from rich.console import Console
            console = Console()
            for r in rich_renderables(comparison):
                console.print(r)
        else:
            sys.stdout.write(render(comparison, fmt))
        sys.stdout.flush()
    except BrokenPipeError:  # `pgio-tui diff a b --format csv | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
