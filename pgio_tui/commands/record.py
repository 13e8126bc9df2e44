"""`pgio-tui record [CONN] -o FILE`: headless recording; Ctrl-C, SIGTERM and SIGHUP close it cleanly."""

from __future__ import annotations

import argparse
import signal
import threading

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of
from pgio_tui.errors import PROG, CliError, say
from pgio_tui.session import StatusLine, close_quietly, open_recorder, open_sampler, stop_on_signals


def run(args: argparse.Namespace) -> int:
    from pgio_tui.store.writer import RecordingError

    path = args.output
    check_overwrite(path, args.force)
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    stop = threading.Event()
    reason = {"why": "duration reached" if args.duration else "stopped"}
    stop_on_signals(stop, reason)
    try:
        recorder = open_recorder(path, args.force, sampler)
    except CliError:
        sampler.close()
        raise
    status = StatusLine(enabled=not args.quiet)
    ticks = 0
    try:
        for frame in sampler.frames(stop, duration=args.duration):
            recorder.write(frame)
            ticks += 1
            status.show(frame, path)
    except RecordingError as exc:
        reason["why"] = f"error: {exc}"
        status.done()
        close_quietly(recorder, reason["why"])
        sampler.close()
        raise CliError(f"{exc}; the ticks recorded before it are kept") from None
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    status.done()
    recorder.close(reason["why"])
    sampler.close()
    say(f"{PROG}: recorded {ticks} ticks to {path} ({reason['why']})")
    return 0
