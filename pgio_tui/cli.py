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
    for add in (_add_live, _add_replay, _add_bench, _add_demo, _add_diff, _add_report):
        add(sub)
    return parser


# Each command below has its parser here and its handler in the module that does the work.

def _add_live(sub) -> None:
    p = sub.add_parser("live", add_help=False, help="the live monitor (the default command)",
                       description="Watch PostgreSQL I/O live: checkpoints, writes by source, Dirty/Writeback, "
                                   "devices, latency, waits.")
    p.add_argument("--help", action="help", help="show this help and exit")
    _session_options(p)
    p.add_argument("--theme", metavar="NAME", help="colour theme (built-in, bundled or from the user themes folder)")
    p.add_argument("--devices", metavar="LIST", help="comma-separated block devices (default: the real disks)")


def _session_options(p: argparse.ArgumentParser) -> None:
    """What every command that watches a server takes: the connection, the tick, a recording."""
    _conn_options(p)
    p.add_argument("--interval", type=_interval, default=1.0, metavar="S", help="seconds per tick (0.1-60, default 1)")
    p.add_argument("--record", metavar="FILE", help="record the session to FILE as well")
    p.add_argument("--force", action="store_true", help="overwrite the --record FILE if it exists")


def _add_replay(sub) -> None:
    p = sub.add_parser("replay", help="replay a recording in the TUI",
                       description="Replay a recording with the live view's panes: pause, step, seek, speed, "
                                   "jump to events. Without FILE, pick one from recordings/.")
    p.add_argument("file", nargs="?", metavar="FILE", help="a recording, or a folder to pick one from")
    p.add_argument("--speed", type=_positive, default=1.0, metavar="X", help="playback speed (default 1)")
    p.add_argument("--start", metavar="T", help="start at hh:mm:ss, +5m, -30s or an elapsed time")
    p.add_argument("--theme", metavar="NAME", help="colour theme")


def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="launch pgbench or the pgio workload, watch and record it",
                       description="Launch a workload against the server and watch/record it.")
    kinds = p.add_subparsers(dest="workload", metavar="WORKLOAD", required=True)
    pb = kinds.add_parser("pgbench", add_help=False, help="pgbench; arguments after -- go to pgbench unchanged",
                          usage="%(prog)s [options] [CONN] -- PGBENCH-ARGS",
                          epilog="Everything after -- is passed to pgbench unchanged, e.g. -- -T 60 -c 4 -j 2.")
    pb.add_argument("--help", action="help", help="show this help and exit")
    _session_options(pb)
    pb.add_argument("--init-scale", type=int, metavar="N", help="run pgbench -i -s N first")
    pb.add_argument("--sampling-rate", type=float, metavar="R", help="log only this fraction of transactions")
    pb.add_argument("--headless", action="store_true", help="no TUI: print pgbench's output and a status line")
    _keep_recording_option(pb)
    pb.set_defaults(pgbench_args=[])  # what follows `--`, split off in main() before parsing
    pg = kinds.add_parser("pgio", add_help=False, help="the pgio-style random-read/update workload")
    pg.add_argument("--help", action="help", help="show this help and exit")
    _session_options(pg)
    pg.add_argument("--headless", action="store_true", help="no TUI: print progress and a status line")
    _keep_recording_option(pg)
    pg.add_argument("--schemas", type=int, default=1, metavar="N", help="tables pgio1..pgioN (default 1)")
    pg.add_argument("--scale", default="64M", metavar="SIZE", help="per table: blocks, or M/G/T (default 64M)")
    pg.add_argument("--sessions", type=int, default=1, metavar="N", help="sessions per table (default 1)")
    pg.add_argument("--run-time", type=_positive, default=60, metavar="S", help="seconds (default 60)")
    pg.add_argument("--update-pct", type=int, default=0, metavar="P", help="0, 1-50 or 100 (default 0)")
    pg.add_argument("--work-unit", type=int, default=255, metavar="N", help="blocks per SELECT (default 255)")
    pg.add_argument("--update-work-unit", type=int, default=8, metavar="N", help="blocks per UPDATE (default 8)")
    pg.add_argument("--setup", action=argparse.BooleanOptionalAction, default=True,
                    help="build the tables first (default); --no-setup reuses them")


def _keep_recording_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep-recording", action="store_true",
                   help="go on recording after the workload ends, until stopped (default: the recording "
                        "ends with the workload)")


def _add_demo(sub) -> None:
    p = sub.add_parser("demo", help="a throwaway lab cluster with a load, shown live: no setup needed",
                       description="Create a lab cluster, run a load that makes checkpoints and writeback "
                                   "visible, and open the live view. Nothing is left running afterwards.")
    p.add_argument("--record", metavar="FILE", help="keep the session in FILE")
    p.add_argument("--force", action="store_true", help="overwrite the --record FILE if it exists")
    p.add_argument("--duration", type=_positive, metavar="S", help="stop after S seconds")
    p.add_argument("--scale", type=int, default=10, metavar="N",
                   help="pgbench scale (default 10, ~160 MB); larger than shared_buffers + RAM cache shows reads")
    p.add_argument("--headless", action="store_true", help="no TUI: print a status line")


def _add_diff(sub) -> None:
    p = sub.add_parser("diff", help="compare two recordings", description="What changed between two recordings.")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    _align_option(p)
    p.add_argument("--format", choices=("table", "markdown", "csv", "json"), default=None,
                   help="print the comparison instead of opening the diff screen")
    p.add_argument("--theme", metavar="NAME", help="colour theme of the diff screen")


def _align_option(p: argparse.ArgumentParser) -> None:
    from pgio_tui.analysis.align import ALIGNMENTS, DEFAULT_ALIGN
    p.add_argument("--align", choices=ALIGNMENTS, default=DEFAULT_ALIGN,
                   help="x = 0 and the stretch compared: auto (default: each workload's run when every "
                        "recording has one, else the first tick), start, workload, checkpoint")


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="a self-contained HTML report of one recording or a comparison of two",
                       description="One recording's report, or the comparison of two (A and B), as one HTML file.")
    p.add_argument("a", metavar="FILE")
    p.add_argument("b", nargs="?", metavar="FILE_B", help="a second recording to compare with the first")
    p.add_argument("-o", "--output", required=True, metavar="report.html")
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    _align_option(p)


def conninfo_of(args: argparse.Namespace) -> str:
    from pgio_tui.sources.postgres import SourceError, conninfo_from_args
    dbname = args.dbname or args.conn
    if args.dbname and args.conn:
        raise CliError("give the database either as CONN or with -d, not both")
    try:
        return conninfo_from_args(args.host, args.port, args.username, dbname)
    except SourceError as exc:
        raise CliError(str(exc)) from None


# -- record ---------------------------------------------------------------------------------

def cmd_record(args: argparse.Namespace) -> int:
    from pgio_tui.store.writer import RecordingError

    path = args.output
    if os.path.exists(path) and not args.force:
        raise CliError(f"{path} exists: use --force to overwrite it, or choose another file")
    devices = [d.strip() for d in args.devices.split(",") if d.strip()] if args.devices else None
    sampler = open_sampler(conninfo_of(args), args.interval, devices)
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
        _close_quietly(recorder, reason["why"])
        sampler.close()
        raise CliError(f"{exc}; the ticks recorded before it are kept") from None
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    status.done()
    recorder.close(reason["why"])
    sampler.close()
    _say(f"{PROG}: recorded {ticks} ticks to {path} ({reason['why']})")
    return 0


# Pieces of a headless session, shared with `bench` and `demo` (pgio_tui.workloads.session).

def open_sampler(conninfo: str, interval: float = 1.0, devices: list[str] | None = None):
    """An opened Sampler, or CliError saying why the server cannot be read."""
    from pgio_tui.sampler import Sampler
    from pgio_tui.sources.postgres import SourceError
    sampler = Sampler(conninfo, interval=interval, devices=devices)
    try:
        sampler.open()
    except SourceError as exc:
        raise CliError(f"cannot connect: {exc}") from None
    return sampler


def open_recorder(path: str, force: bool, sampler):
    """A Recorder holding the sampler's metadata and settings snapshot, or CliError."""
    from pgio_tui.secrets import command_line
    from pgio_tui.store.writer import Recorder, RecordingError
    try:
        recorder = Recorder(path, force=force, meta={**sampler.meta(), "command_line": command_line(PROG)})
    except RecordingError as exc:
        raise CliError(str(exc)) from None
    try:
        recorder.set_settings(sampler.settings_rows())
    except RecordingError as exc:
        _close_quietly(recorder, f"error: {exc}")
        raise CliError(str(exc)) from None
    return recorder


def stop_on_signals(stop: threading.Event, reason: dict) -> None:
    """SIGINT, SIGTERM and SIGHUP set `stop` (reason["why"] says which) instead of killing us."""
    def on_signal(signum, _frame):
        reason["why"] = f"signal {signal.Signals(signum).name}"
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)


def _close_quietly(recorder, why: str) -> None:
    try:
        recorder.close(why)
    except Exception:
        pass


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


def _lazy(module: str, func: str):
    """Handlers living elsewhere are imported only when their command runs (the TUI is heavy)."""
    def run(args):
        import importlib
        return getattr(importlib.import_module(module), func)(args)
    return run


COMMANDS = {
    "record": cmd_record, "export": cmd_export, "info": cmd_info,
    "live": _lazy("pgio_tui.tui.app", "run_live"),
    "replay": _lazy("pgio_tui.tui.replay", "run_replay"),
    "bench": _lazy("pgio_tui.workloads.bench", "run_bench"),
    "demo": _lazy("pgio_tui.workloads.demo", "run_demo"),
    "diff": _lazy("pgio_tui.analysis.diff_cmd", "run_diff"),
    "report": _lazy("pgio_tui.analysis.report", "run_report"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("--help", "--version")):
        argv.insert(0, "live")  # `pgio-tui [CONN] [options]` is the live monitor
    parser = build_parser()
    passthrough = None
    if argv[:2] == ["bench", "pgbench"] and "--" in argv:  # pgbench's words never meet our parser
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if passthrough is not None:
        args.pgbench_args = passthrough
    try:
        return COMMANDS[args.command](args)
    except CliError as exc:
        _say(f"{PROG}: error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
