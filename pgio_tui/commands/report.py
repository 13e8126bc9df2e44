"""`pgio-tui report FILE [FILE2] -o report.html`: one self-contained HTML file (analysis/report.py)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.errors import PROG, CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.analysis.align import AlignError
    from pgio_tui.analysis.report import build
    from pgio_tui.store.reader import RecordingError

    if not 1 <= len(args.files) <= 2:
        raise CliError("report takes one recording, or two to compare")
    for path in args.files:
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")
    try:
        html = build(args.files, getattr(args, "align", None))
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(html)
    print(f"{PROG}: wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} kB)")
    return 0
