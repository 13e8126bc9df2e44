"""What several commands share: the psql-style connection, the device list, the --force check,
the Prometheus endpoint of --listen."""

from __future__ import annotations

import argparse
import os

from pgio_tui.errors import PROG, CliError, ConnectError, say


_told = {"password": False}  # warnings said once per process


def conninfo_of(args: argparse.Namespace) -> str:
    """CONN / -h -p -U -d as a libpq conninfo (PG* variables, ~/.pgpass and services still apply).
    A password in it is said once on stderr to be visible to other users."""
    from pgio_tui.sources.postgres import SourceError, conninfo_from_args
    dbname = args.dbname or args.conn
    if args.dbname and args.conn:
        raise CliError("give the database either as CONN or with -d, not both")
    try:
        conninfo = conninfo_from_args(args.host, args.port, args.username, dbname)
    except SourceError as exc:  # a connection string libpq refuses: no connection, exit 2 as psql's
        raise ConnectError(str(exc)) from None
    from pgio_tui.secrets import in_conninfo
    if in_conninfo(conninfo) and not _told["password"]:
        _told["password"] = True
        say(f"{PROG}: warning: a password on the command line is visible to every local user (ps, "
            "/proc/PID/cmdline); use PGPASSWORD, ~/.pgpass or -W instead")
    if getattr(args, "password", False):
        from psycopg.conninfo import conninfo_to_dict
        user = conninfo_to_dict(conninfo).get("user")
        _prompt_password(None if user is None else str(user))
    return conninfo


def _prompt_password(user: str | None) -> None:
    """-W: ask once, as psql does. The password goes to libpq (and a launched pgbench) through
    PGPASSWORD in our own environment: never into a conninfo, a command line or a recording."""
    import getpass
    try:
        password = getpass.getpass(f"Password for user {user or os.environ.get('PGUSER') or getpass.getuser()}: ")
    except (EOFError, KeyboardInterrupt):
        raise CliError("no password given") from None
    os.environ["PGPASSWORD"] = password


def devices_of(args: argparse.Namespace) -> list[str] | None:
    """--devices LIST as names; None: the real disks."""
    text = getattr(args, "devices", None)
    return [d.strip() for d in text.split(",") if d.strip()] if text else None


def check_overwrite(path: str | None, force: bool) -> None:
    """A recording is never overwritten without --force (checked before connecting)."""
    if path and os.path.exists(path) and not force:
        raise CliError(f"{path} exists: use --force to overwrite it, or choose another file")
    if path and force:
        from pgio_tui.store.files import check_replaceable
        from pgio_tui.store.schema import RecordingError
        try:
            check_replaceable(path)
        except RecordingError as exc:
            raise CliError(str(exc)) from None


def open_recording(path: str, args: argparse.Namespace | None = None):
    """An open Recording (a folder of rotated ones: a Timeline of the files that --from/--to in
    `args` reach, when they are dates), or CliError saying why not."""
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.store.timeline import open_recording as open_any
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    try:
        return open_any(path, *_dates(args))
    except RecordingError as exc:
        raise CliError(str(exc)) from None


def _dates(args: argparse.Namespace | None) -> tuple[float | None, float | None]:
    """--from/--to given as dates (they need no recording to be read): which files to open."""
    from pgio_tui.store.player import parse_jump
    out = []
    for text in (getattr(args, "from_t", None), getattr(args, "to_t", None)):
        try:  # a date is the same moment whatever the recording's times; the other forms are not
            at = [parse_jump(text, start_t=t, end_t=t, now_t=t) for t in (0.0, 1e9)] if text else [None]
        except ValueError:
            at = [None]  # said by window_of, with the recording open
        out.append(at[0] if len(set(at)) == 1 else None)
    return out[0], out[1]


def window_of(rec, args: argparse.Namespace) -> tuple[int | None, int | None]:
    """The ticks of --from/--to (None, None without them), or CliError."""
    from pgio_tui.store.player import parse_jump
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.store.timeline import tick_window
    times = []
    for flag, text in (("--from", getattr(args, "from_t", None)), ("--to", getattr(args, "to_t", None))):
        try:
            times.append(None if text is None else parse_jump(text, start_t=rec.start_t, end_t=rec.end_t,
                                                                now_t=rec.end_t))
        except ValueError as exc:
            raise CliError(f"{flag}: {exc}") from None
    try:
        return tick_window(rec, *times)
    except RecordingError as exc:
        raise CliError(str(exc)) from None


def windowed_paths(paths: list[str], args: argparse.Namespace, scratch: str) -> list[str]:
    """`paths` with each folder of rotated recordings, and with --from/--to each recording, as one
    file of that window copied into `scratch` (diff and report read single files)."""
    from pgio_tui.store.reader import RecordingError
    from pgio_tui.store.rotation import is_rotation_folder
    from pgio_tui.store.timeline import copy_window
    windowed = getattr(args, "from_t", None) is not None or getattr(args, "to_t", None) is not None
    out = []
    for i, path in enumerate(paths):
        if not (is_rotation_folder(path) or (windowed and os.path.isfile(path))):
            out.append(path)
            continue
        if not windowed:  # days of ticks copied would take minutes
            raise CliError(f"{path} is an always-on recorder's folder: give the window to read with --from/--to")
        copy = os.path.join(scratch, f"{i}-{os.path.basename(os.path.normpath(path))}")
        copy = copy if copy.endswith(".pgio") else copy + ".pgio"
        with open_recording(path, args) as rec:
            start, end = window_of(rec, args)
            try:
                copy_window(rec, copy, start, end)
            except RecordingError as exc:
                raise CliError(str(exc)) from None
        out.append(copy)
    return out


def open_exporter(args, sampler):
    """A started Prometheus endpoint for `--listen` (None without it; TLS with `--tls-cert`, basic
    auth with `--auth-file`), or CliError. Its on_frame(frame) is one more consumer of the Session's
    Frames."""
    if args.listen is None:
        return None
    from pgio_tui.export.httpserve import read_users, tls_context
    from pgio_tui.export.prometheus import Exporter, ListenError
    from pgio_tui.export.promnames import server_label
    try:
        tls = tls_context(args.tls_cert, args.tls_key or args.tls_cert) if args.tls_cert else None
        users = read_users(args.auth_file) if args.auth_file else None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    host, port = args.listen  # cli._listen's (host, port)
    if users and not tls and host not in ("127.0.0.1", "::1", "localhost"):
        say(f"{PROG}: warning: without --tls-cert, the --auth-file passwords cross the network in clear text")
    exporter = Exporter(server_label(sampler.meta()), host, port, tls=tls, users=users)
    try:
        url = exporter.start()
    except ListenError as exc:
        raise CliError(str(exc)) from None
    say(f"{PROG}: serving Prometheus metrics on {url}")
    return exporter
