"""What several commands share: the psql-style connection, the device list, the --force check,
the Prometheus endpoint of --listen."""

from __future__ import annotations

import argparse
import os

from pgio_tui.errors import PROG, CliError, say


def conninfo_of(args: argparse.Namespace) -> str:
    """CONN / -h -p -U -d as a libpq conninfo (PG* variables, ~/.pgpass and services still apply)."""
    from pgio_tui.sources.postgres import SourceError, conninfo_from_args
    dbname = args.dbname or args.conn
    if args.dbname and args.conn:
        raise CliError("give the database either as CONN or with -d, not both")
    try:
        conninfo = conninfo_from_args(args.host, args.port, args.username, dbname)
    except SourceError as exc:
        raise CliError(str(exc)) from None
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


def open_recording(path: str):
    """An open Recording, or CliError saying why not."""
    from pgio_tui.store.reader import Recording, RecordingError
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    try:
        return Recording(path)
    except RecordingError as exc:
        raise CliError(str(exc)) from None


def open_exporter(listen: tuple[str, int] | None, sampler):
    """A started Prometheus endpoint for `--listen` (None without it), or CliError. Its
    on_frame(frame) is one more consumer of the Session's Frames."""
    if listen is None:
        return None
    from pgio_tui.export.prometheus import Exporter, ListenError
    from pgio_tui.export.promnames import server_label
    exporter = Exporter(server_label(sampler.meta()), *listen)
    try:
        url = exporter.start()
    except ListenError as exc:
        raise CliError(str(exc)) from None
    say(f"{PROG}: serving Prometheus metrics on {url}")
    return exporter
