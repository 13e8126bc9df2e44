"""`pgio-tui replay [FILE|FOLDER] [--speed X] [--start|--at T] [--theme NAME]`: a recording in the TUI;
a folder of `record --rotate` files plays as one timeline (store/timeline.py), any other folder
is a list to pick from."""

from __future__ import annotations

import argparse
import os

from pgio_tui.errors import CliError


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.player import parse_jump
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.tui.app import RECORDINGS_DIR

    from pgio_tui.store.rotation import is_rotation_folder
    from pgio_tui.store.timeline import open_recording

    target = args.file or RECORDINGS_DIR
    if os.path.isdir(target) and not is_rotation_folder(target):
        from pgio_tui.tui.screens.picker import pick_recording
        try:
            picked = pick_recording(target, theme=args.theme)
        except RecordingError as exc:
            raise CliError(str(exc)) from None
        if picked is None:  # the user left the list
            return 0
        target = picked
    elif not args.file:
        raise CliError(f"no FILE given and no {RECORDINGS_DIR}/ folder here: give a recording or a "
                       "folder of recordings")
    try:
        rec = open_recording(target, lazy=True)  # a folder of rotated recordings: one timeline
    except RecordingError as exc:
        raise CliError(str(exc)) from None
    with rec:
        if rec.last_tick is None or rec.start_t is None or rec.end_t is None:
            raise CliError(f"{target} holds no ticks yet")
        start_t = None
        if args.start:
            try:
                start_t = parse_jump(args.start, start_t=rec.start_t, end_t=rec.end_t, now_t=rec.start_t)
            except ValueError as exc:
                raise CliError(f"--start: {exc}") from None
        from pgio_tui.tui.replay import ReplayApp
        try:
            app = ReplayApp(rec, speed=args.speed, start_t=start_t, theme=args.theme)
        except RecordingError as exc:  # a damaged tick where replay starts
            raise CliError(str(exc)) from None
        app.run()
    if app.error:  # a damaged tick met later on
        raise CliError(app.error)
    return app.return_code or 0
