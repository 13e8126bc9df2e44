"""`pgio-tui diff A B [C …] | DIR [--baseline FILE|NAME=V] [--from T] [--to T]`: compare recordings
and print the comparison, or open the diff screen. A folder of `record --rotate` files, and with
--from/--to every input, is compared as its window (one file copied for it).

Every run against the baseline (analysis/compare.py). Two recordings without --format open the
diff screen (`pgio_tui.tui.diff_screen.run_diff_screen(comparison, args)`); three or more, or an
experiment folder's runs, are printed (the diff screen shows two runs; without --format the table).
The TUI is never loaded with --format.
"""

from __future__ import annotations

import argparse
import sys

from pgio_tui.analysis.align import AlignError
from pgio_tui.analysis.compare import Comparison, compare_files
from pgio_tui.analysis.formats import render, rich_renderables, table_width
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


def load(args: argparse.Namespace, got=None) -> Comparison:
    """Every recording of the command line against the baseline."""
    got = got or inputs_of(args)
    try:
        return compare_files(got.files, args.align, got.baseline, got.labels)
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
    c = load(args, got)
    if args.format is None and len(got.files) == 2:
        from pgio_tui.tui.diff_screen import run_diff_screen
        return run_diff_screen(c, args)
    fmt = args.format or "table"
    from pgio_tui.analysis.findings_out import comparison_findings
    found = comparison_findings(c)
    from rich.text import Text
    return _print(lambda: [*rich_renderables(c), Text(found.text())], lambda: found.added_to(render(c, fmt), fmt), fmt,
                  table_width(c))


def _print(renderables, text, fmt: str, width: int | None) -> int:
    if fmt == "table" and sys.stdout.isatty():
        from rich.console import Console
        console = Console(width=max(width or 0, Console().width))
        for r in renderables():
            console.print(r)
    else:
        sys.stdout.write(text())
    sys.stdout.flush()
    return 0
