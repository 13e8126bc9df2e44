"""Command line: `pgio-tui [live|record|export|info|...]` with psql-style connection options.

Argument parsing and dispatch only: each command's work is in pgio_tui/commands/<name>.py,
imported when that command runs, so headless commands never load the TUI.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import re
import sys

from pgio_tui import __version__
from pgio_tui import userconfig
from pgio_tui.errors import PROG, CliError, ConnectError, error_line

__all__ = ["COMMANDS", "PROG", "CliError", "build_parser", "main"]


def _conn_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connection (as psql; PG* variables, ~/.pgpass and services apply)")
    g.add_argument("conn", nargs="?", metavar="CONN", help="database name, conninfo string or URI")
    g.add_argument("-h", "--host", help="server host or socket directory")
    g.add_argument("-p", "--port", help="server port")
    g.add_argument("-U", "--username", help="user name")
    g.add_argument("-d", "--dbname", help="database name, conninfo string or URI")
    ask = g.add_mutually_exclusive_group()
    ask.add_argument("-w", "--no-password", action="store_true",
                     help="never prompt for a password (as psql -w; pgio-tui asks only with -W)")
    ask.add_argument("-W", "--password", action="store_true",
                     help="prompt for the password before connecting (as psql -W)")


def _interval(text: str) -> float:
    from pgio_tui.frame import MAX_INTERVAL, MIN_INTERVAL
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
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("must be a number greater than 0 (not nan or inf)")
    return value


def _above_zero(parse, what: str):
    """An argparse type: `parse(text)` (ValueError: a message for the user), more than 0 `what`."""
    def convert(text: str):
        try:
            value = parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: more than 0 {what}")
        return value
    return convert


def _period(text: str) -> float:
    """1h, 7d, 10m, 90s -> seconds."""
    from pgio_tui.store.player import parse_seconds
    return _above_zero(parse_seconds, "s")(text)


def _size(text: str) -> int:
    """2GB, 500MB, 2GiB -> bytes."""
    from pgio_tui.format import parse_size
    return _above_zero(parse_size, "bytes")(text)


def _fraction(text: str) -> float:
    value = _positive(text)
    if value > 1:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def _listen(text: str) -> tuple[str, int]:
    from pgio_tui.export.prometheus import ListenError, parse_listen
    try:
        return parse_listen(text)
    except ListenError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _listen_option(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--listen", type=_listen, required=required, metavar="[HOST:]PORT",
                   help="serve Prometheus /metrics on PORT (HOST defaults to 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--tls-cert", metavar="PEM", help="serve /metrics over TLS with this certificate (chain)")
    p.add_argument("--tls-key", metavar="PEM", help="the certificate's private key (default: in --tls-cert)")
    p.add_argument("--auth-file", metavar="FILE",
                   help="require HTTP basic auth: `name:password` lines in FILE, mode 0600 (never on the command line)")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only`, just that command's parser (what `main` needs: the other
    commands' options, and the modules their defaults come from, are left out)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Terminal monitor for PostgreSQL I/O: record, export and inspect sessions.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--profile", metavar="NAME",
                        help="take the defaults of [profiles.NAME] in the config file (any command)")
    parser.add_argument("--print-man", action=_PrintMan, help="print the manual page (roff) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def wanted(name: str) -> bool:
        return only is None or only == name

    if wanted("record"):
        rec = sub.add_parser("record", add_help=False, help="record a session to a file, no screen needed",
                             description="Record headless. Ctrl-C, SIGTERM or SIGHUP close the file cleanly.")
        rec.add_argument("--help", action="help", help="show this help and exit")
        _conn_options(rec)
        rec.add_argument("-o", "--output", metavar="FILE|DIR",
                         help="the recording to write (SQLite); with --rotate, the folder of recordings")
        rec.add_argument("--interval", type=_interval, default=1.0, metavar="S",
                         help="seconds per tick (0.1-60, default 1)")
        rec.add_argument("--duration", type=_positive, metavar="S",
                         help="stop after S seconds (default: until stopped)")
        rec.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
        rec.add_argument("--devices", metavar="LIST", help="comma-separated block devices (default: the real disks)")
        rec.add_argument("--quiet", action="store_true", help="no status line")
        _listen_option(rec)
        g = rec.add_argument_group("always on (one recording per period in the -o folder)")
        g.add_argument("--rotate", type=_period, metavar="PERIOD",
                       help="a new file every PERIOD (1h, 1d, 10m; aligned to UTC), named by its start time")
        g.add_argument("--retain", type=_period, metavar="AGE",
                       help="remove files whose period ended more than AGE ago (7d, 12h)")
        g.add_argument("--retain-size", type=_size, metavar="SIZE",
                       help="remove the oldest files while the folder holds more than SIZE (2GB, 500MB)")
        g.add_argument("--print-systemd-unit", action="store_true",
                       help="print a systemd service running this command (as given) and exit")

    if wanted("serve"):
        srv = sub.add_parser("serve", add_help=False, help="a Prometheus /metrics endpoint, no recording",
                             description="Sample the server and serve the latest tick as Prometheus metrics. "
                                         "Ctrl-C, SIGTERM or SIGHUP stop it.")
        srv.add_argument("--help", action="help", help="show this help and exit")
        _conn_options(srv)
        _listen_option(srv, required=True)
        srv.add_argument("--interval", type=_interval, default=1.0, metavar="S",
                         help="seconds per tick (0.1-60, default 1)")
        srv.add_argument("--devices", metavar="LIST", help="comma-separated block devices (default: the real disks)")
        srv.add_argument("--quiet", action="store_true", help="no status line")

    if wanted("export"):
        exp = sub.add_parser("export", help="one row per tick, one column per metric",
                             description="Write a recording's ticks as CSV, JSON Lines or OpenMetrics to stdout "
                                         "or a file.")
        exp.add_argument("file", metavar="FILE")
        exp.add_argument("--format", choices=("csv", "json", "openmetrics"), default="csv",
                         help="openmetrics: Prometheus names with timestamps, for promtool tsdb create-blocks-from")
        exp.add_argument("--metrics", action="append", metavar="GLOB",
                         help="only metrics matching GLOB (repeatable), e.g. 'mem.*' or 'disk.*.util_pct'")
        exp.add_argument("--backends", action="store_true",
                         help="the recorded backends instead: one row per backend per tick (csv or json)")
        exp.add_argument("--io", action="store_true",
                         help="the recorded pg_stat_io rows instead (16+): one row per backend type, object and "
                              "context per tick, with kB and ms per second; x dt: the tick's counts (csv or json)")
        exp.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
        _window_options(exp)

    if wanted("info"):
        info = sub.add_parser("info", help="what a recording or an experiment folder holds",
                              description="Metadata, duration, ticks, checkpoints, events and devices of a recording; "
                                          "or the runs of an experiment folder (order, settings, state, flags, "
                                          "recording, duration).")
        info.add_argument("file", metavar="FILE|DIR")
    if wanted("completion"):
        from pgio_tui.completion import SHELLS
        comp = sub.add_parser("completion", help="a shell completion script for bash, zsh or fish",
                              description="Print the completion script: commands, options, recordings and "
                                          "setting names for --set.",
                              epilog=f"bash: source <({PROG} completion bash); zsh: source <({PROG} completion "
                                     f"zsh); fish: {PROG} completion fish | source")
        comp.add_argument("shell", choices=SHELLS)
    for name, add in (("live", _add_live), ("replay", _add_replay), ("bench", _add_bench), ("demo", _add_demo),
                      ("diff", _add_diff), ("report", _add_report), ("findings", _add_findings),
                      ("experiment", _add_experiment)):
        if wanted(name):
            add(sub)
    return parser


# Each command below has its parser here and its handler in pgio_tui/commands/<name>.py.

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
    p.add_argument("--start", "--at", dest="start", metavar="T",
                   help="start at hh:mm:ss, 'YYYY-MM-DD hh:mm', +5m, -30s or an elapsed time")
    p.add_argument("--theme", metavar="NAME", help="colour theme")


def _pgbench_args_parser(sub, name: str, help: str, usage: str, example: str) -> argparse.ArgumentParser:
    """A subcommand whose arguments after -- go to pgbench; only --help is help (-h is the host, as in psql)."""
    p = sub.add_parser(name, add_help=False, help=help, usage=usage,
                       epilog=f"Everything after -- is passed to pgbench unchanged, e.g. -- {example}.")
    p.add_argument("--help", action="help", help="show this help and exit")
    return p


def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="launch pgbench or the pgio workload, watch and record it",
                       description="Launch a workload against the server and watch/record it.")
    kinds = p.add_subparsers(dest="workload", metavar="WORKLOAD", required=True)
    pb = _pgbench_args_parser(kinds, "pgbench", "pgbench; arguments after -- go to pgbench unchanged",
                              "%(prog)s [options] [CONN|--lab] -- PGBENCH-ARGS", "-T 60 -c 4 -j 2")
    _session_options(pb)
    pb.add_argument("--lab", action="store_true", help="run on a throwaway lab cluster (no server needed), "
                    "removed afterwards; pgbench -i -s 10 first unless --init-scale")
    pb.add_argument("--init-scale", type=int, metavar="N", help="run pgbench -i -s N first")
    pb.add_argument("--sampling-rate", type=_fraction, metavar="R", help="log only this fraction of transactions")
    pb.add_argument("--headless", action="store_true", help="no TUI: print pgbench's output and a status line")
    _keep_recording_option(pb)
    _listen_option(pb)
    pb.set_defaults(pgbench_args=[])  # what follows `--`, split off in main() before parsing
    pg = kinds.add_parser("pgio", add_help=False, help="the pgio-style random-read/update workload")
    pg.add_argument("--help", action="help", help="show this help and exit")
    _session_options(pg)
    pg.add_argument("--lab", action="store_true", help="run on a throwaway lab cluster (no server needed), "
                    "removed afterwards")
    pg.add_argument("--headless", action="store_true", help="no TUI: print progress and a status line")
    _keep_recording_option(pg)
    _listen_option(pg)
    from pgio_tui.workloads.launch import PGIO_DEFAULTS as d  # the dialog's defaults too

    def opt(flag: str, help: str, **kw) -> None:
        pg.add_argument(flag, default=d[flag[2:].replace("-", "_")], help=f"{help} (default %(default)s)", **kw)

    opt("--schemas", "tables pgio1..pgioN", type=int, metavar="N")
    opt("--scale", "per table: blocks, or M/G/T", metavar="SIZE")
    opt("--sessions", "sessions per table", type=int, metavar="N")
    opt("--run-time", "seconds", type=_positive, metavar="S")
    opt("--update-pct", "0, 1-50 or 100", type=int, metavar="P")
    opt("--work-unit", "blocks per SELECT", type=int, metavar="N")
    opt("--update-work-unit", "blocks per UPDATE", type=int, metavar="N")
    pg.add_argument("--setup", action=argparse.BooleanOptionalAction, default=d["setup"],
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
    p = sub.add_parser("diff", help="compare recordings (two, N, or an experiment folder's runs)",
                       description="What changed between recordings: two (the diff screen, or --format), or "
                                   "N and experiment folders (every run against the baseline, printed).")
    p.add_argument("inputs", nargs="+", metavar="FILE|DIR",
                   help="recordings, or an experiment folder (its finished runs)")
    _baseline_option(p)
    _align_option(p)
    _window_options(p)
    p.add_argument("--format", choices=("table", "markdown", "csv", "json"), default=None,
                   help="print the comparison instead of opening the diff screen (N runs: default table)")
    p.add_argument("--theme", metavar="NAME", help="colour theme of the diff screen")


def _baseline_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", metavar="FILE|NAME=V",
                   help="the run the others are compared with: one of the FILEs, or the first whose setting "
                        "NAME is V (default: the first FILE; in an experiment folder the first run of the "
                        "first value of each --set)")


def _align_option(p: argparse.ArgumentParser) -> None:
    from pgio_tui.analysis.align import ALIGNMENTS, DEFAULT_ALIGN
    p.add_argument("--align", choices=ALIGNMENTS, default=DEFAULT_ALIGN,
                   help="x = 0 and the stretch compared: auto (default: each workload's run when every "
                        "recording has one, else the first tick), start, workload, checkpoint")


def _window_options(p: argparse.ArgumentParser) -> None:
    """--from/--to: a time window of a recording, or of a folder of rotated ones."""
    g = p.add_argument_group("time window (of a recording or a `record --rotate` folder)")
    g.add_argument("--from", dest="from_t", metavar="T",
                   help="from 'YYYY-MM-DD hh:mm[:ss]', hh:mm:ss, an elapsed time (90s, 1h) or -2h from the end")
    g.add_argument("--to", dest="to_t", metavar="T", help="up to T (the same forms)")


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="a self-contained HTML report of recordings or an experiment folder",
                       description="One recording's report, or the comparison of two or more (or of an experiment "
                                   "folder's runs) against a baseline, as one HTML file.")
    p.add_argument("inputs", nargs="+", metavar="FILE|DIR",
                   help="one recording, several to compare with the first (or --baseline), or an experiment folder")
    _baseline_option(p)
    p.add_argument("-o", "--output", required=True, metavar="report.html")
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    _align_option(p)
    _window_options(p)


def _add_findings(sub) -> None:
    p = sub.add_parser("findings", help="what a recording shows, each finding with its evidence",
                       description="Read a recording (or each finished run of an experiment folder) against the "
                                   "findings rules (docs/findings.md): backends writing buffers, checkpoints forced "
                                   "by WAL, slow checkpoint phases, latency spikes during writeback, saturated "
                                   "devices, a read set that does not fit, autovacuum in a spike. Each finding "
                                   "names the figures it rests on; a quiet run has none.")
    p.add_argument("file", metavar="FILE|DIR", help="a recording, or an experiment folder (its finished runs)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json: a list of findings (id, text, strength, metrics, figures, "
                        "windows, suggestion)")
    _align_option(p)
    _window_options(p)


def _add_experiment(sub) -> None:
    p = sub.add_parser("experiment", help="a setting sweep with repeats: run it, resume it, report it",
                       description="Run the same workload once per setting value and repeat, one recording "
                                   "per run in a folder; report the means, 95 % intervals and verdicts.")
    act = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = act.add_parser("run", add_help=False, help="run a sweep into a new folder",
                       usage="%(prog)s [CONN | --lab] --set NAME=V1,V2 [...] -o DIR WORKLOAD ...",
                       epilog="WORKLOAD is one of: pgbench -- PGBENCH-ARGS (passed unchanged, e.g. -- -c 4 -T 60); "
                              "pgio [--scale SIZE --run-time S --sessions N --update-pct P ...] (the bench pgio "
                              "options); sql 'STATEMENT' [--times N] [--before 'SQL'] (each execution timed). "
                              "os.page_cache=SIZE caps the server's page cache (cgroup memory limit).")
    r.add_argument("--help", action="help", help="show this help and exit")
    _conn_options(r)
    from pgio_tui.experiments.plan import DIRTY_WAIT_S, RESTART_WARMUP_S, WORKLOADS
    r.add_argument("workload", choices=WORKLOADS, metavar="WORKLOAD",
                   help="pgbench (then -- and its arguments), pgio [options] or sql 'STATEMENT' [--times N]")
    r.add_argument("--lab", action="store_true", help="a throwaway lab cluster, removed afterwards")
    r.add_argument("--pg-version", type=int, metavar="N", help="the lab cluster's major version")
    r.add_argument("--set", action="append", required=True, metavar="NAME=V1,V2",
                   help="a setting and its values (repeatable: a grid of all combinations)")
    r.add_argument("--repeat", type=_repeat, default=3, metavar="N|auto",
                   help="runs per combination (default 3); auto: from 2, one more round at a time until the "
                        "headline verdicts settle, or --max-repeat / --budget runs out")
    r.add_argument("--max-repeat", type=int, default=None, metavar="N", help="--repeat auto: at most N (default 10)")
    r.add_argument("--budget", metavar="TIME", help="--repeat auto: no new round after TIME (e.g. 30m, 1h)")
    r.add_argument("--order", choices=("interleaved", "random", "sequential"), default="interleaved",
                   help="interleaved (default): A B A B; sequential: A A B B; random: shuffled")
    r.add_argument("--warmup", type=float, default=0.0, metavar="S",
                   help="before each run, S seconds of the workload that are not recorded")
    r.add_argument("--restart-warmup", type=float, default=RESTART_WARMUP_S, metavar="S",
                   help="after a restart (a postmaster setting, the first os.page_cache cap), S seconds of the "
                        "workload that are not recorded: the cold caches stay out of the figures "
                        "(default %(default)g; 0: none)")
    r.add_argument("--discard-first", action=argparse.BooleanOptionalAction, default=True,
                   help="one unrecorded run first, after init (default: yes)")
    r.add_argument("--init-scale", type=int, metavar="N", help="pgbench -i -s N once first (--lab default 10)")
    r.add_argument("--seed", type=int, default=0, metavar="N", help="seed of --order random")
    r.add_argument("--interval", type=_interval, default=1.0, metavar="S", help="seconds per tick (default 1)")
    r.add_argument("--allow-settings", action="store_true", help="allow ALTER SYSTEM on a server that is not --lab")
    r.add_argument("--allow-restart", action="store_true",
                   help="allow restarting a server that is not --lab (pg_ctl restart) for postmaster settings")
    r.add_argument("--reinit", action="store_true", help="set the workload up again before every run (pgbench -i)")
    r.add_argument("--dirty-wait", type=float, default=DIRTY_WAIT_S, metavar="S",
                   help="before each run, wait up to S s for Dirty under the background threshold "
                        "(default %(default)g)")
    r.add_argument("-o", "--output", required=True, metavar="DIR", help="the experiment folder (new)")
    r.add_argument("--quiet", action="store_true", help="no progress bar (the lines per run stay)")
    r.add_argument("--tui", action="store_true",
                   help="show the runs in the live monitor with an experiment strip (default: headless)")
    r.add_argument("--theme", metavar="NAME", help="colour theme of --tui")
    r.set_defaults(pgbench_args=[], workload_args=[])
    s = act.add_parser("resume", add_help=False, help="continue an interrupted experiment")
    s.add_argument("--help", action="help", help="show this help and exit")
    s.add_argument("dir", metavar="DIR")
    _conn_options(s)
    s.add_argument("--allow-settings", action="store_true", help="allow ALTER SYSTEM on a server that is not --lab")
    s.add_argument("--allow-restart", action="store_true", help="allow restarting a server that is not --lab")
    s.add_argument("--quiet", action="store_true", help="no progress bar (the lines per run stay)")
    s.add_argument("--tui", action="store_true",
                   help="show the runs in the live monitor with an experiment strip (default: headless)")
    s.add_argument("--theme", metavar="NAME", help="colour theme of --tui")
    t = act.add_parser("report", help="the results table of an experiment folder (or of several, as one grid)")
    t.add_argument("dir", metavar="DIR", nargs="+",
                   help="an experiment folder; several with the same settings swept are reported as one grid, "
                        "the workload option they differ in (or the folder) as one more dimension")
    t.add_argument("--format", choices=("table", "markdown", "csv", "json", "html"),
                   help="table (default), markdown, csv, json, or html (one self-contained page with charts; "
                        "the default when -o ends in .html)")
    t.add_argument("--baseline", metavar="NAME=V", help="the baseline value (default: the first of each --set)")
    t.add_argument("--figures", action="append", default=[], metavar="GLOB",
                   help="the figures to show instead of the default set, by catalog name, key or label "
                        "(repeatable), e.g. 'waits.*', 'disk.PGDATA.*', 'wal.*'; json carries every figure")
    t.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output")


def _repeat(text: str) -> int | str:
    """--repeat: a number of runs per combination, or auto."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a number, or auto") from None


def _subparser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The (sub)parser the words before -h name, for its help."""
    for word in argv[:2]:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if action is None or word not in action.choices:
            break
        parser = action.choices[word]
    return parser


# pgbench options our bench parser does not have: given without `--`, argparse would only say
# "unrecognized arguments". Ours that look alike (-h -p -U -d -W) are psql's and stay ours.
_PGBENCH_ONLY = ("-T", "-c", "-j", "-t", "-S", "-N", "-b", "-f", "-M", "-R", "-L", "-P", "-r", "-n", "-s",
                 "-i", "-C", "-l", "-D", "-v", "--time", "--client", "--jobs", "--transactions", "--rate",
                 "--protocol", "--builtin", "--file", "--progress", "--latency-limit", "--scale",
                 "--select-only", "--skip-some-updates")


def _pgbench_words(words: list[str]) -> str | None:
    return next((w for w in words if w in _PGBENCH_ONLY or w.split("=")[0] in _PGBENCH_ONLY), None)


def _split_workload(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[list[str], list[str] | None]:
    """`experiment run ... WORKLOAD WORDS`: cut after the workload's name (the first pgbench, pgio or
    sql that is not an option's value), so its options never meet our parser."""
    run = _subparser(parser, argv[:2])
    takes_value = {o for a in run._actions if a.option_strings and a.nargs is None and a.const is None
                   and not isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction))
                   for o in a.option_strings}
    from pgio_tui.experiments.plan import WORKLOADS
    for i in range(2, len(argv)):
        if argv[i] in WORKLOADS and argv[i - 1] not in takes_value:
            return argv[:i + 1], argv[i + 1:]
    return argv, None


def _lazy(name: str):
    """pgio_tui.commands.<name>.run, imported only when its command runs (the TUI is heavy)."""
    def run(args):
        import importlib
        return importlib.import_module(f"pgio_tui.commands.{name}").run(args)
    return run


COMMANDS = {name: _lazy(name) for name in
            ("live", "record", "serve", "export", "info", "replay", "diff", "report", "findings", "bench",
             "demo", "experiment")}


def _completion(args: argparse.Namespace) -> int:
    from pgio_tui.completion import script
    print(script(args.shell, build_parser()), end="")
    return 0


COMMANDS["completion"] = _completion
_TOP_OPTIONS = ("--help", "--version", "--print-man")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv, profile = _take_profile(argv)
        config = userconfig.load(profile)
    except CliError as exc:
        error_line(exc)
        return 2
    word = _bare_word(argv)  # `pgio-tui WORD`: a database name as in psql, unless it is a mistyped command
    if word is not None and len(argv) > 1 and not argv[1].startswith("-"):
        error_line(_unknown_command(word))  # live takes one CONN: WORD WORD2 is a command that is not one
        return 2
    if not argv or (argv[0] not in COMMANDS and argv[0] not in _TOP_OPTIONS):
        argv.insert(0, "live")  # `pgio-tui [CONN] [options]` is the live monitor
    parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
    passthrough = None
    if (argv[:2] == ["bench", "pgbench"] or argv[:2] == ["experiment", "run"]) and "--" in argv:  # pgbench's words never meet our parser
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    if argv[-1] == "-h":  # psql's -h is the host; alone it can only mean "help"
        _subparser(parser, argv).print_help()
        print(f"\n{PROG}: -h is the server host (as in psql); --help shows this help")
        return 0
    if argv[:2] == ["bench", "pgbench"] and passthrough is None:
        hint = _pgbench_words(argv[2:])
        if hint:
            error_line(CliError(f"{hint} looks like a pgbench option: put pgbench's arguments after --, "
                                f"e.g. {PROG} bench pgbench [CONN] -- -T 60 -c 4"))
            return 2
    workload_args = None
    if argv[:2] == ["experiment", "run"]:  # pgio's and sql's words are the workload's, not ours
        argv, workload_args = _split_workload(parser, argv)
    try:
        _config_defaults(_subparser(parser, argv), argv, config)
    except CliError as exc:
        error_line(exc)
        return 2
    config.apply_connection()
    args = parser.parse_args(argv)
    args.argv = argv  # as typed: `record --print-systemd-unit` runs it again
    if passthrough is not None:
        args.pgbench_args = passthrough
    if workload_args is not None:
        args.workload_args = workload_args
    paused_gc = _pause_gc_until_first_frame(args)
    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:  # `pgio-tui info DIR | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so exit's flush cannot fail again
        return 0
    except Exception as exc:
        from pgio_tui.store.schema import RecordingError
        if not isinstance(exc, (CliError, RecordingError)):
            raise
        if isinstance(exc, ConnectError) and word is not None and getattr(args, "conn", None) == word:
            exc = ConnectError(_unknown_command(word, exc))  # a mistyped command, or a database that is not there
        error_line(exc)  # one line, whatever the file or the server said
        return getattr(exc, "status", 1)
    except KeyboardInterrupt:
        return 130
    finally:
        if paused_gc:
            gc.enable()  # the TUI turns it on at its first frame; this is for every other ending


def _take_profile(argv: list[str]) -> tuple[list[str], str | None]:
    """--profile NAME (or =NAME) from anywhere before --, for every command."""
    out, profile, i = [], None, 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            out += argv[i:]
            break
        if word == "--profile":
            if i + 1 >= len(argv):
                raise CliError("--profile: give a NAME (a [profiles.NAME] table of the config file)")
            profile, i = argv[i + 1], i + 2
            continue
        if word.startswith("--profile="):
            profile = word.split("=", 1)[1]
        else:
            out.append(word)
        i += 1
    return out, profile


def _bare_word(argv: list[str]) -> str | None:
    """The first word when it is a plain name and no command (a database name, or a mistyped command)."""
    if argv and argv[0] not in COMMANDS and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", argv[0]):
        return argv[0]
    return None


def _unknown_command(word: str, connect_error: Exception | None = None) -> str:
    """git's answer to a mistyped command; after a failed connection, what the server said too."""
    import difflib
    near = difflib.get_close_matches(word, COMMANDS, n=1)
    text = f"unknown command {word!r}" + (f"; did you mean {near[0]!r}?" if near
                                          else f" (commands: {', '.join(COMMANDS)})")
    if connect_error is None:
        return text
    return f"{text} As a database name: {connect_error}" if near else f"{text}; as a database name: {connect_error}"


def _config_defaults(leaf: argparse.ArgumentParser, argv: list[str], config: userconfig.Config) -> None:
    """The config file's values (pgio_tui/userconfig.py: its keys are the options' dests) as defaults of
    the command's options (the command line still wins), each checked as its option's value would be;
    CliError naming the key."""
    values = {k: (k, v) for k, v in config.common.items()}
    if argv[:2] == ["experiment", "run"]:
        values.update({k: (f"experiment.{k}", v) for k, v in config.experiment.items()})
    for action in leaf._actions:
        if action.dest in values:
            key, value = values[action.dest]
            leaf.set_defaults(**{action.dest: _checked(action, value, f"{config.path}: {key}")})


def _checked(action: argparse.Action, value, where: str):
    if isinstance(action, (argparse.BooleanOptionalAction, argparse._StoreTrueAction)):
        if not isinstance(value, bool):
            raise CliError(f"{where}: give true or false")
        return value
    if isinstance(value, (bool, dict, list)):
        raise CliError(f"{where}: give a {'number' if action.type in (int, float, _interval) else 'string'}")
    try:
        checked = action.type(str(value)) if callable(action.type) else str(value)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise CliError(f"{where}: {exc}") from None
    if action.choices and checked not in action.choices:
        raise CliError(f"{where}: one of {', '.join(action.choices)}")
    return checked


class _PrintMan(argparse.Action):
    """--print-man: the manual page, made from this parser (pgio_tui/manpage.py)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from pgio_tui.manpage import render
        print(render(build_parser()), end="")
        parser.exit()


def _pause_gc_until_first_frame(args: argparse.Namespace) -> bool:
    """Start-up (imports, CSS, the first compose) makes objects, not garbage: the cyclic collector
    would walk them again and again (~15 % of the CPU to the first frame). The live and replay
    monitors run without it until their first frame is drawn (MonitorApp turns it back on); not
    replay's list of recordings, which waits on the user."""
    picker = args.command == "replay" and not (args.file and not os.path.isdir(args.file))
    if args.command not in ("live", "replay") or picker or not gc.isenabled():
        return False
    gc.disable()
    return True
