"""Command line: `pgio-tui [live|record|export|info|...]` with psql-style connection options.

Headless commands import only the core; the Textual app is imported lazily by the commands
that draw.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

from pgio_tui import __version__

PROG = "pgio-tui"


class CliError(Exception):
    """A one-line message for the user; the command exits with status 1."""


def _conn_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connection (as psql; PG* variables, ~/.pgpass and services apply)")
    g.add_argument("conn", nargs="?", metavar="CONN", help="database name, conninfo string or URI")
    g.add_argument("-h", "--host", help="server host or socket directory")
    g.add_argument("-p", "--port", help="server port")
    g.add_argument("-U", "--username", help="user name")
    g.add_argument("-d", "--dbname", help="database name, conninfo string or URI")


def _interval(text: str) -> float:
    from pgio_tui.sampler import MAX_INTERVAL, MIN_INTERVAL
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise argparse.ArgumentTypeError(f"must be between {MIN_INTERVAL} and {MAX_INTERVAL} seconds")
    return value


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Terminal monitor for PostgreSQL I/O: record, export and inspect sessions.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rec = sub.add_parser("record", add_help=False, help="record a session to a file, no screen needed",
                         description="Record headless. Ctrl-C, SIGTERM or SIGHUP close the file cleanly.")
    rec.add_argument("--help", action="help", help="show this help and exit")
    _conn_options(rec)
    rec.add_argument("-o", "--output", required=True, metavar="FILE", help="the recording to write (SQLite)")
    rec.add_argument("--interval", type=_interval, default=1.0, metavar="S", help="seconds per tick (0.1-60, default 1)")
    rec.add_argument("--duration", type=_positive, metavar="S", help="stop after S seconds (default: until stopped)")
    rec.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    rec.add_argument("--devices", metavar="LIST", help="comma-separated block devices (default: the real disks)")
    rec.add_argument("--quiet", action="store_true", help="no status line")

    exp = sub.add_parser("export", help="one row per tick, one column per metric",
                         description="Write a recording's ticks as CSV or JSON Lines to stdout or a file.")
    exp.add_argument("file", metavar="FILE")
    exp.add_argument("--format", choices=("csv", "json"), default="csv")
    exp.add_argument("--metrics", action="append", metavar="GLOB",
                     help="only metrics matching GLOB (repeatable), e.g. 'mem.*' or 'disk.*.util_pct'")
    exp.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")

    info = sub.add_parser("info", help="what a recording holds", description="Metadata, duration, ticks, "
                          "checkpoints, events and devices of a recording.")
    info.add_argument("file", metavar="FILE")
    return parser


def conninfo_of(args: argparse.Namespace) -> str:
    from pgio_tui.sources.postgres import conninfo_from_args
    dbname = args.dbname or args.conn
    if args.dbname and args.conn:
        raise CliError("give the database either as CONN or with -d, not both")
    return conninfo_from_args(args.host, args.port, args.username, dbname)


# -- record ---------------------------------------------------------------------------------

def cmd_record(args: argparse.Namespace) -> int:
    from pgio_tui.sampler import Sampler
    from pgio_tui.sources.postgres import SourceError
    from pgio_tui.store.writer import Recorder, RecordingError

    path = args.output
    if os.path.exists(path) and not args.force:
        raise CliError(f"{path} exists: use --force to overwrite it, or choose another file")
    devices = [d.strip() for d in args.devices.split(",") if d.strip()] if args.devices else None
    sampler = Sampler(conninfo_of(args), interval=args.interval, devices=devices)
    try:
        sampler.open()
    except SourceError as exc:
        raise CliError(f"cannot connect: {exc}") from None
    stop = threading.Event()
    reason = {"why": "duration reached" if args.duration else "stopped"}

    def on_signal(signum, _frame):
        reason["why"] = f"signal {signal.Signals(signum).name}"
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        recorder = Recorder(path, force=args.force, meta={**sampler.meta(), "command_line": _argv_line()})
    except RecordingError as exc:
        sampler.close()
        raise CliError(str(exc)) from None
    status = StatusLine(enabled=not args.quiet)
    ticks = 0
    try:
        recorder.set_settings(sampler.settings_rows())
        for frame in sampler.frames(stop, duration=args.duration):
            recorder.write(frame)
            ticks += 1
            status.show(frame, path)
    except RecordingError as exc:
        reason["why"] = f"error: {exc}"
        status.done()
        _close_quietly(recorder, reason["why"])
        sampler.close()
        raise CliError(f"{exc} (the ticks recorded so far are kept in {path})") from None
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    status.done()
    recorder.close(reason["why"])
    sampler.close()
    _say(f"{PROG}: recorded {ticks} ticks to {path} ({reason['why']})")
    return 0


def _close_quietly(recorder, why: str) -> None:
    try:
        recorder.close(why)
    except Exception:
        pass


def _argv_line() -> str:
    from pgio_tui.store.writer import scrub_secrets
    return scrub_secrets(" ".join([PROG, *sys.argv[1:]]))


def _say(text: str) -> None:
    """stderr may be gone (ssh dropped, nohup): never let a status line kill a recording."""
    try:
        print(text, file=sys.stderr, flush=True)
    except OSError:
        pass


class StatusLine:
    """A compact one-line status: redrawn in place on a terminal, one line every 10 s otherwise."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def show(self, frame, path: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty and now - self._last < 10:
            return
        self._last = now
        v = frame.values

        def f(name, fmt="{:.0f}"):
            x = v.get(name)
            return "-" if x is None else fmt.format(x)

        ck = "ckpt " + (f"{v.get('checkpoint.kind') or ''} {f('checkpoint.progress', '{:.0%}')}"
                        if v.get("checkpoint.active") else "idle")
        text = (f"{time.strftime('%H:%M:%S', time.localtime(frame.t))} tick {frame.tick} | {ck} | "
                f"wr ckpt/bgw/be {f('writes.checkpointer')}/{f('writes.bgwriter')}/{f('writes.backend')} "
                f"| dirty {f('mem.dirty_kb', '{:.0f}')}kB | tps {f('latency.tps')} | {path}")
        try:
            if self.tty:
                sys.stderr.write("\r\x1b[2K" + text[: os.get_terminal_size(2).columns - 1])
            else:
                sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except OSError:
            self.enabled = False

    def done(self) -> None:
        if self.enabled and self.tty:
            try:
                sys.stderr.write("\n")
            except OSError:
                pass


# -- export / info --------------------------------------------------------------------------

def _open_recording(path: str):
    from pgio_tui.store.reader import Recording, RecordingError
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    try:
        return Recording(path)
    except RecordingError as exc:
        raise CliError(str(exc)) from None


def cmd_export(args: argparse.Namespace) -> int:
    from pgio_tui.store.export import export
    rec = _open_recording(args.file)
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        export(rec, out, fmt=args.format, metrics=args.metrics)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except BrokenPipeError:  # `pgio-tui export f | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        if args.output:
            out.close()
        rec.close()
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from pgio_tui.store.export import describe
    rec = _open_recording(args.file)
    try:
        print(describe(rec))
    finally:
        rec.close()
    return 0


COMMANDS = {"record": cmd_record, "export": cmd_export, "info": cmd_info}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except CliError as exc:
        _say(f"{PROG}: error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
