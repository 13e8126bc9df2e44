"""`pgio-tui report FILE [FILE_B] -o report.html`: one self-contained HTML file (analysis/report.py)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.commands.common import check_overwrite
from pgio_tui.errors import PROG, CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.analysis.align import AlignError
    from pgio_tui.analysis.report import build
    from pgio_tui.store.reader import RecordingError

    files = [f for f in (args.a, args.b) if f]
    for path in files:
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")
    check_overwrite(args.output, args.force)
    try:
        html = build(files, args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(html)
    print(f"{PROG}: wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} kB)")
    return 0
