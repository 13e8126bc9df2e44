"""`pgio-tui findings FILE|DIR [--format text|json]`: what a recording shows, each finding with the
evidence it rests on (analysis/findings.py). An experiment folder: the findings of each finished
run; a folder of `record --rotate` files: its files read as one (a Timeline); with --from/--to any
input, its window."""

from __future__ import annotations

import argparse
import json
import sys

from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    import tempfile

    from pgio_tui.commands.common import windowed_paths
    from pgio_tui.store.rotation import is_rotation_folder
    if is_rotation_folder(args.file) and args.from_t is None and args.to_t is None:
        args.inputs = [args.file]  # the rules read the folder's files as one Timeline, nothing copied
        return _run(args)
    with tempfile.TemporaryDirectory(prefix="pgio-tui-") as scratch:  # the windows, while they are read
        args.inputs = windowed_paths([args.file], args, scratch)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pgio_tui.analysis.align import AlignError
    from pgio_tui.analysis.findings import findings_of_file
    from pgio_tui.analysis.findings_out import NONE, text_lines
    from pgio_tui.experiments.inputs import InputError, gather
    from pgio_tui.safe_text import printable
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.store.rotation import is_rotation_folder
    try:
        got = gather(list(args.inputs)) if not is_rotation_folder(args.inputs[0]) else None
    except InputError as exc:
        raise CliError(str(exc)) from None
    files, labels = (got.files, got.labels) if got else ([args.inputs[0]], [args.inputs[0]])
    if not files:
        raise CliError(f"{args.file}: no finished run to read yet")
    runs = []
    try:
        for path, label in zip(files, labels):
            runs.append((str(path), label, findings_of_file(path, args.align)))
    except (RecordingError, AlignError) as exc:
        raise CliError(str(exc)) from None
    if args.format == "json":
        out = [{"path": p, "label": label, "findings": [f.to_dict() for f in found]} for p, label, found in runs]
        text = json.dumps(out[0]["findings"] if len(out) == 1 else out, indent=2, allow_nan=False) + "\n"
    else:
        lines = []
        for _, label, found in runs:
            if len(runs) > 1:
                lines.append(f"{printable(label)}:")
            body = text_lines(found) or [NONE]
            lines += [("  " if len(runs) > 1 else "") + printable(x) for x in body]
        text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0
