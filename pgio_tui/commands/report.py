"""`pgio-tui report FILE… | DIR -o report.html`: one self-contained HTML file — one recording's
report, or N compared against a baseline (analysis/report.py).
An experiment folder alone is its experiment report (per setting value, experiments/html.py, the
HTML of `experiment report DIR -o FILE.html`); with other recordings, or `--baseline FILE`, its
finished runs are N recordings like any others. A folder of `record --rotate` files, and with
--from/--to every input, is reported as its window (one file copied for it)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.commands.common import check_overwrite
from pgio_tui.errors import PROG, CliError


def run(args: argparse.Namespace) -> int:
    import tempfile

    from pgio_tui.commands.common import windowed_paths
    with tempfile.TemporaryDirectory(prefix="pgio-tui-") as scratch:  # the windows, while they are read
        args.inputs = windowed_paths(list(getattr(args, "inputs", None) or [f for f in (args.a, args.b) if f]),
                                     args, scratch)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
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
        from pgio_tui.analysis.report import build
        html = build(got.files, args.align, got.baseline, got.labels)
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    return _write(args.output, html)


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
    return _write(args.output, render(res, "html"))


def _write(path: str, html: str) -> int:
    """The report, private like the recordings it is made of (0600)."""
    from pgio_tui.private import write_text
    try:
        write_text(path, html)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"{PROG}: wrote {path} ({os.path.getsize(path) / 1024:.0f} kB)")
    return 0
