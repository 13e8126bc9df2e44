"""`pgio-tui [live] [CONN] [--interval S] [--record FILE] [--force] [--theme NAME] [--devices LIST]`.

The server is connected to on a thread once the TUI has painted its first frame (header and panes):
psycopg's import, the connection and the first sample come right after it (tui/feed.py's Connecting;
off a terminal, at once).
"""

from __future__ import annotations

import argparse
import socket

from pgio_tui.commands.common import check_overwrite, conninfo_of, devices_of
from pgio_tui.session import open_sampler


def run(args: argparse.Namespace) -> int:
    check_overwrite(args.record, args.force)
    # -W prompts here, before the TUI takes the terminal; otherwise the conninfo (psycopg's import) is the thread's
    given = conninfo_of(args) if getattr(args, "password", False) else None
    interval, devices = args.interval, devices_of(args)

    def connect():
        return open_sampler(given or conninfo_of(args), interval, devices)

    # Textual-free: the thread starts before the TUI's import (and waits for its first paint, or
    # PAINT_WAIT_S). The modules both import are loaded first.
    import pgio_tui.metrics, pgio_tui.sources  # noqa: F401, E401
    from pgio_tui.tui.feed import Connecting
    connecting = Connecting(connect, after_paint=True, record_path=args.record, force=args.force)
    try:
        from pgio_tui.tui.live import run_connecting
        from pgio_tui.tui.session import SessionInfo
    except BaseException:
        connecting.close()
        raise
    dbname = args.dbname or args.conn or ""
    known = SessionInfo(source="live", host=args.host or "", port=str(args.port or ""), interval=interval,
                        dbname="" if "=" in dbname or "://" in dbname else dbname, client_host=socket.gethostname())
    return run_connecting(connecting, known, theme=args.theme)
