"""`pgio-tui info FILE|DIR`: what a recording holds (metadata, duration, ticks, checkpoints, events,
devices), the runs of an experiment folder (order, settings, state, flags, recording, duration), or
the files of an always-on recorder's folder (`record --rotate`)."""

from __future__ import annotations

import argparse
import os

from pgio_tui.commands.common import open_recording
from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.rotation import is_rotation_folder
    if is_rotation_folder(args.file):
        return _rotated(args.file)
    if os.path.isdir(args.file):
        return _experiment(args.file)
    from pgio_tui.store.export import describe
    rec = open_recording(args.file)
    try:
        print(describe(rec))
    finally:
        rec.close()
    return 0


def _experiment(folder: str) -> int:
    from pgio_tui.experiments.listing import describe
    from pgio_tui.experiments.plan import PlanError, load
    try:
        plan = load(folder)
    except PlanError as exc:
        raise CliError(f"{exc} (info takes a recording or an experiment folder)") from None
    print(describe(plan, folder))
    return 0


def _rotated(folder: str) -> int:
    """One line per file (its period, ticks, size), then the timeline they make."""
    import time

    from pgio_tui.format import clock
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.store.timeline import Timeline

    def when(t: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))

    try:
        timeline = Timeline(folder)
    except RecordingError as exc:
        raise CliError(str(exc)) from None
    with timeline as t:
        total = 0
        for p in t.parts:
            size = p.rec.path.stat().st_size
            total += size
            print(f"{p.rec.path.name}  {when(p.start_t)} .. {when(p.end_t)}  {p.rec.tick_count:>6} ticks  "
                  f"{size / 1e6:6.2f} MB")
        print(f"{len(t.parts)} files, {total / 1e6:.1f} MB: {when(t.start_t)} .. {when(t.end_t)} "
              f"({clock(t.duration, hours=True)}), {t.tick_count} ticks, "
              f"{len(t.events(['gap']))} gap(s), {len(t.checkpoints())} checkpoints")
        if t.note:
            print(f"left out: {t.note}")
    return 0
