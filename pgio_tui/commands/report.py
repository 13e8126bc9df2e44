"""`pgio-tui report FILE… | DIR -o report.html`: one self-contained HTML file — one recording's
report (analysis/report.py), two compared, or N (or an experiment folder's runs) against a
baseline (analysis/report_many.py)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.commands.common import check_overwrite
from pgio_tui.errors import PROG, CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.analysis.align import AlignError
    from pgio_tui.experiments.inputs import InputError, gather
    from pgio_tui.store.reader import RecordingError

    paths = getattr(args, "inputs", None) or [f for f in (args.a, args.b) if f]
    try:
        got = gather(list(paths), getattr(args, "baseline", None))
    except InputError as exc:
        raise CliError(str(exc)) from None
    if not got.files:
        raise CliError(f"{', '.join(map(str, got.folders))}: no finished run to report yet")
    check_overwrite(args.output, args.force)
    try:
        if len(got.files) > 2 or got.folders:
            from pgio_tui.analysis.report_many import build_many
            html = build_many(got.files, args.align, got.baseline, got.labels) if len(got.files) > 1 else None
        else:
            html = None
        if html is None:
            from pgio_tui.analysis.report import build
            files = got.files if got.baseline == 0 else [got.files[1], got.files[0]]
            html = build(files, args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(html)
    print(f"{PROG}: wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} kB)")
    return 0
