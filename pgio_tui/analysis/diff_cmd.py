"""`pgio-tui diff A B`: compare two recordings and print the comparison, or open the diff screen.

With --format the comparison is printed (table, markdown, csv, json) and the TUI is never loaded.
Without it the TUI's diff screen opens when it is installed: the seam is
`pgio_tui.tui.diff_screen.run_diff_screen(comparison, args) -> int`, given the Comparison built
here; until that module exists the table is printed, with a one-line note on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.compare import Comparison, compare
from pgio_tui.analysis.formats import render, rich_renderables
from pgio_tui.cli import CliError
from pgio_tui.store.reader import RecordingError

DIFF_SCREEN = "pgio_tui.tui.diff_screen"


def load(args: argparse.Namespace) -> Comparison:
    for path in (args.a, args.b):
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")
    try:
        return compare(args.a, args.b, args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None


def _diff_screen_available() -> bool:
    try:
        return importlib.util.find_spec(DIFF_SCREEN) is not None
    except ImportError:  # pgio_tui.tui itself missing
        return False


def run_diff(args: argparse.Namespace) -> int:
    comparison = load(args)
    fmt = args.format
    if fmt is None:
        if _diff_screen_available():
            return importlib.import_module(DIFF_SCREEN).run_diff_screen(comparison, args)
        print("pgio-tui: the diff screen is not available yet; printing the table "
              "(use --format to choose table, markdown, csv or json)", file=sys.stderr)
        fmt = "table"
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
