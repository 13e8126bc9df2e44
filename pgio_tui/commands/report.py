"""`pgio-tui report FILE… | DIR -o report.html`: one self-contained HTML file — one recording's
report (analysis/report.py), two compared, or N against a baseline (analysis/report_many.py).
An experiment folder alone is its experiment report (per setting value, experiments/html.py, the
HTML of `experiment report DIR -o FILE.html`); with other recordings, or `--baseline FILE`, its
finished runs are N recordings like any others."""

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
    if len(paths) == 1 and os.path.isdir(paths[0]) and _per_setting(paths[0], getattr(args, "baseline", None)):
        return _experiment(paths[0], args)
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
            html = build_many(list(got.files), args.align, got.baseline, got.labels) if len(got.files) > 1 else None
        else:
            html = None
        if html is None:
            from pgio_tui.analysis.report import build
            files = got.files if got.baseline == 0 else [got.files[1], got.files[0]]
            html = build(list(files), args.align)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(html)
    print(f"{PROG}: wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} kB)")
    return 0


def _per_setting(folder: str, baseline: str | None) -> bool:
    """An experiment folder's own report, unless --baseline names one run (a FILE) rather than a
    swept value (NAME=V)."""
    from pgio_tui.experiments import results
    from pgio_tui.experiments.plan import PlanError, load
    if baseline is None:
        return True
    try:
        results.parse_baseline(baseline, load(folder))
    except PlanError:
        return False
    return True


def _experiment(folder: str, args: argparse.Namespace) -> int:
    from pgio_tui.experiments import results
    from pgio_tui.experiments.plan import PlanError, load
    from pgio_tui.experiments.report import render
    try:
        plan = load(folder)
        res = results.collect(plan, folder, results.parse_baseline(getattr(args, "baseline", None), plan))
    except PlanError as exc:
        raise CliError(str(exc)) from None
    if not any(r.runs for r in res.rows):
        raise CliError(f"{folder}: no finished run to report yet; `{PROG} experiment resume {folder}` runs them")
    check_overwrite(args.output, args.force)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(render(res, "html"))
    print(f"{PROG}: wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} kB)")
    return 0
