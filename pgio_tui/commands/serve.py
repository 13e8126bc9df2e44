"""`pgio-tui serve [CONN] --listen [HOST:]PORT`: the Prometheus endpoint without a recording.

record without the recorder: the sampler's Frames go to the exporter only; Ctrl-C, SIGTERM and
SIGHUP stop it.
"""

from __future__ import annotations

import argparse
import signal
import threading

from pgio_tui.commands.common import conninfo_of, devices_of
from pgio_tui.errors import PROG, CliError, say
from pgio_tui.session import StatusLine, open_exporter, open_sampler, stop_on_signals


def run(args: argparse.Namespace) -> int:
    sampler = open_sampler(conninfo_of(args), args.interval, devices_of(args))
    stop = threading.Event()
    reason = {"why": "stopped"}
    stop_on_signals(stop, reason)
    try:
        exporter = open_exporter(args.listen, sampler)
    except CliError:
        sampler.close()
        raise
    status = StatusLine(enabled=not args.quiet)
    ticks = 0
    try:
        for frame in sampler.frames(stop):
            exporter.on_frame(frame)
            ticks += 1
            status.show(frame, exporter.url)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        exporter.close()
        sampler.close()
        status.done()
    say(f"{PROG}: served {ticks} ticks ({reason['why']})")
    return 0
