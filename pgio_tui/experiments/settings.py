"""Settings of an experiment: ALTER SYSTEM + reload (or a restart when pg_settings.context is
postmaster), read back, and the originals put back afterwards.

What is put back is what postgresql.auto.conf held before: a setting that had an ALTER SYSTEM entry
gets that value again, one that had none is RESET (its postgresql.conf or default value returns).
The originals are taken once, before the first change, and kept in experiment.json, so an
interrupted experiment restores them too when resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

Restart = Callable[[], None]


class SettingsError(RuntimeError):
    """A setting that cannot be read, set or put back: one line."""


def _ident(name: str) -> sql.Composable:
    return sql.SQL(".").join(map(sql.Identifier, name.split(".")))


def read_originals(conninfo: str, names: list[str]) -> dict[str, dict[str, Any]]:
    """name -> {setting, unit, context, auto_conf: the ALTER SYSTEM value or None}; SettingsError for
    an unknown name."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute("select name, setting, unit, context from pg_settings where name = any(%s)",
                            [names]).fetchall()
        facts = {n: {"setting": s, "unit": u, "context": c, "auto_conf": None} for n, s, u, c in rows}
        unknown = sorted(set(names) - set(facts))
        if unknown:
            raise SettingsError(f"unknown setting(s) {', '.join(unknown)}: check the names in pg_settings")
        try:
            for name, value in conn.execute(
                    "select name, setting from pg_file_settings where name = any(%s) "
                    "and sourcefile like '%%postgresql.auto.conf' order by seqno", [names]).fetchall():
                facts[name]["auto_conf"] = value  # the last entry wins, as in the server
        except psycopg.Error as exc:
            raise SettingsError(f"cannot read pg_file_settings (superuser needed): {exc.diag.message_primary or exc}") \
                from None
    return facts


def needs_restart(originals: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(n for n, f in originals.items() if f["context"] == "postmaster")


def apply(conninfo: str, values: dict[str, str | None], restart: Restart | None) -> dict[str, str]:
    """ALTER SYSTEM SET each (None: RESET), reload or restart; returns name -> the value the server
    now reports (current_setting, with its unit), read on a new connection."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        contexts = dict(conn.execute("select name, context from pg_settings where name = any(%s)",
                                     [list(values)]).fetchall())
        for name, value in values.items():
            try:
                if value is None:
                    conn.execute(sql.SQL("ALTER SYSTEM RESET {}").format(_ident(name)))
                else:
                    conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(_ident(name), sql.Literal(value)))
            except psycopg.Error as exc:
                raise SettingsError(f"cannot set {name} = {value!r}: {exc.diag.message_primary or exc}") from None
        restart_needed = any(contexts.get(n) == "postmaster" for n in values)
        loaded = None
        if not restart_needed:
            loaded = conn.execute("select pg_conf_load_time()").fetchone()[0]
            conn.execute("select pg_reload_conf()")
    if restart_needed:
        if restart is None:
            raise SettingsError(f"{', '.join(n for n in values if contexts.get(n) == 'postmaster')} needs a "
                                "restart, which this version can only do on a --lab cluster")
        restart()
    else:
        _wait_for_reload(conninfo, loaded)
    return read_back(conninfo, list(values))


def _wait_for_reload(conninfo: str, before, timeout: float = 10.0) -> None:
    """The reload is asynchronous: wait until a new backend reports a later config load."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            if conn.execute("select pg_conf_load_time() > %s", [before]).fetchone()[0]:
                return
        time.sleep(0.05)
    raise SettingsError("the server did not reload its configuration within 10 s")


def read_back(conninfo: str, names: list[str]) -> dict[str, str]:
    """current_setting of each name (with its unit), on a new connection."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return {n: conn.execute("select current_setting(%s)", [n]).fetchone()[0] for n in names}


def restore(conninfo: str, originals: dict[str, dict[str, Any]], restart: Restart | None) -> dict[str, str]:
    """Put back what postgresql.auto.conf held; returns the values read back."""
    return apply(conninfo, {n: f["auto_conf"] for n, f in originals.items()}, restart)


def server_facts(conninfo: str) -> dict[str, Any]:
    """The server's data directory, postmaster pid (when it runs on this machine, else None) and
    shared_buffers in bytes: what a restart and os.page_cache need."""
    import os
    postmaster = None
    with psycopg.connect(conninfo, autocommit=True) as conn:
        pid, datadir, sb = conn.execute(
            "select pg_backend_pid(), current_setting('data_directory'), "
            "pg_size_bytes(current_setting('shared_buffers'))").fetchone()
        try:  # while connected: our backend exits when the connection closes
            stat = open(f"/proc/{pid}/stat").read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if os.path.realpath(f"/proc/{ppid}/cwd") == os.path.realpath(datadir):
                postmaster = ppid  # the postmaster runs in its data directory: this machine's server
        except (OSError, ValueError, IndexError):
            pass
    return {"datadir": datadir, "postmaster": postmaster, "shared_buffers_bytes": int(sb)}


def server_restart(conninfo: str) -> Restart:
    """A restart of a user's server on this machine (--allow-restart): `pg_ctl restart -m fast -w`
    from the server's own bin directory, as the data directory's owner; pg_ctl reuses the options the
    server was started with (postmaster.opts). Its messages go to DATADIR/pgio-tui-restart.log.
    SettingsError when the server is not on this machine."""
    import os
    import subprocess
    facts = server_facts(conninfo)
    if facts["postmaster"] is None:
        raise SettingsError("a restart needs the server on this machine (its postmaster was not found in /proc)")
    try:
        bindir = os.path.dirname(os.path.realpath(f"/proc/{facts['postmaster']}/exe"))
    except OSError as exc:
        raise SettingsError(f"cannot find the server's programs ({exc.strerror}): run as root or as its owner") \
            from None
    pg_ctl = os.path.join(bindir, "pg_ctl")
    datadir = facts["datadir"]
    st = os.stat(datadir)
    kw: dict[str, Any] = {}
    if os.geteuid() == 0 and st.st_uid != 0:
        kw = {"user": st.st_uid, "group": st.st_gid}

    def restart() -> None:
        r = subprocess.run([pg_ctl, "restart", "-D", datadir, "-m", "fast", "-w", "-t", "300",
                            "-l", os.path.join(datadir, "pgio-tui-restart.log")], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, cwd="/", **kw)
        if r.returncode != 0:
            last = (r.stderr or r.stdout or "").strip().splitlines()
            raise SettingsError(f"pg_ctl restart failed: {last[-1] if last else f'exit status {r.returncode}'}")
    return restart
