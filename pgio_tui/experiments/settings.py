"""Settings of an experiment: ALTER SYSTEM + reload (or a restart when pg_settings.context is
postmaster), read back, and the originals put back afterwards.

What is put back is what postgresql.auto.conf held before: a setting that had an ALTER SYSTEM entry
gets that value again, one that had none is RESET (its postgresql.conf or default value returns).
The originals are taken once, before the first change, and kept in experiment.json, so an
interrupted experiment restores them too when resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg
from psycopg import sql

from pgio_tui.sources.postgres import one_row, scalar

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


def apply(conninfo: str, values: Mapping[str, str | None], restart: Restart | None) -> dict[str, str]:
    """ALTER SYSTEM SET each (None: RESET), reload or restart; returns name -> the value the server
    now reports (current_setting, with its unit), read on a new connection."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        contexts: dict[str, str] = dict(conn.execute("select name, context from pg_settings where name = any(%s)",
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
            loaded = scalar(conn, "select pg_conf_load_time()")
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
            if scalar(conn, "select pg_conf_load_time() > %s", [before]):
                return
        time.sleep(0.05)
    raise SettingsError("the server did not reload its configuration within 10 s")


def read_back(conninfo: str, names: list[str]) -> dict[str, str]:
    """current_setting of each name (with its unit), on a new connection."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        return {n: scalar(conn, "select current_setting(%s)", [n]) for n in names}


def restore(conninfo: str, originals: dict[str, dict[str, Any]], restart: Restart | None) -> dict[str, str]:
    """Put back what postgresql.auto.conf held; returns the values read back."""
    return apply(conninfo, {n: f["auto_conf"] for n, f in originals.items()}, restart)


def server_facts(conninfo: str) -> dict[str, Any]:
    """The server's data directory, postmaster pid (when it runs on this machine, else None) and
    shared_buffers in bytes: what a restart and os.page_cache need."""
    import os
    postmaster = None
    with psycopg.connect(conninfo, autocommit=True) as conn:
        pid, datadir, sb = one_row(conn.execute(
            "select pg_backend_pid(), current_setting('data_directory'), "
            "pg_size_bytes(current_setting('shared_buffers'))"))
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


# --- checking the values before anything runs ---------------------------------------------------

# PostgreSQL's units (guc.c): memory in bytes, time in milliseconds; case-sensitive, as the server's.
_MEMORY_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_TIME_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_BOOL_WORDS = ("true", "false", "yes", "no")  # any prefix of these, as the server's parse_bool
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def check_values(conninfo: str, sweep: dict[str, list[str]]) -> None:
    """Every swept setting exists and can be set, and every value is one the server takes, before
    anything runs; SettingsError naming the first bad one. Settings a session may change are tried
    with SET LOCAL in a transaction that is rolled back (the server's own check, hooks included);
    the others (reload, restart) against pg_settings: vartype, min_val/max_val, enumvals, unit."""
    import difflib
    with psycopg.connect(conninfo, autocommit=True) as conn:
        facts = {r[0]: r for r in conn.execute(
            "select name, vartype, unit, min_val, max_val, enumvals, context from pg_settings").fetchall()}
        for name, values in sweep.items():
            if name not in facts:
                near = difflib.get_close_matches(name, facts, n=1)
                raise SettingsError(f"--set {name}: no such setting in pg_settings"
                                    + (f"; did you mean {near[0]}?" if near else ""))
            _, vartype, unit, lo, hi, enumvals, context = facts[name]
            if context == "internal":
                raise SettingsError(f"--set {name}: read-only (fixed when the cluster was created or built)")
            for value in values:
                why = (_server_refuses(conn, name, value) if context in ("user", "superuser")
                       else _refused(value, vartype, unit, lo, hi, enumvals))
                if why:
                    raise SettingsError(f"--set {name}={value}: {why}")


def _server_refuses(conn: psycopg.Connection, name: str, value: str) -> str | None:
    try:
        with conn.transaction(force_rollback=True):
            conn.execute(sql.SQL("SET LOCAL {} = {}").format(_ident(name), sql.Literal(value)))
    except psycopg.errors.InsufficientPrivilege:
        return None  # ALTER SYSTEM needs a superuser anyway: read_originals says so
    except psycopg.Error as exc:
        return exc.diag.message_primary or str(exc)
    return None


def _refused(value: str, vartype: str, unit: str | None, lo: str | None, hi: str | None,
             enumvals: list[str] | None) -> str | None:
    """Why the server would refuse `value` (None: it would take it), from pg_settings' facts."""
    import re
    text = value.strip()
    if vartype == "bool":
        return None if _is_bool(text) else "not a boolean (on, off, true, false, yes, no, 1, 0)"
    if vartype == "enum":
        choices = list(enumvals or [])
        if text.lower() in (c.lower() for c in choices):
            return None
        if {"on", "off"} & {c.lower() for c in choices} and _is_bool(text):
            return None  # the hidden spellings of on/off (true, yes, 1, ...)
        return f"not one of {', '.join(choices)}"
    if vartype not in ("integer", "real"):
        return None  # a string: only the server's hooks know (ALTER SYSTEM checks it at the first run)
    m = re.fullmatch(rf"({_NUMBER}|0[xX][0-9a-fA-F]+)\s*([A-Za-z]*)", text)
    if not m:
        return "not a number" + (f" (in {unit}, or with a unit)" if unit else "")
    digits = m.group(1)
    if digits[:2].lower() == "0x":
        number = float(int(digits, 16))
    elif vartype == "integer" and re.fullmatch(r"0[0-7]+", digits):
        number = float(int(digits, 8))  # strtol's base 0, as the server reads it
    else:
        number = float(digits)
    if m.group(2):
        scaled = _to_base_unit(number, m.group(2), unit)
        if isinstance(scaled, str):
            return scaled
        number = scaled
    if vartype == "integer":
        number = float(round(number))  # a fraction is rounded (PostgreSQL 12+)
    if lo is not None and hi is not None and not float(lo) <= number <= float(hi):
        return f"out of range: {lo} to {hi}{_unit_hint(unit)}"
    return None


def _is_bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "0", "on", "off") or (len(low) >= 2 and "off".startswith(low)):
        return True
    return bool(low) and any(word.startswith(low) for word in _BOOL_WORDS)


def _to_base_unit(number: float, given: str, unit: str | None) -> float | str:
    """number × `given` in the setting's unit (pg_settings.unit: 8kB, kB, MB, ms, s, min ...), or why not."""
    import re
    m = re.fullmatch(r"(\d*)\s*([A-Za-z]+)", unit or "")
    base, base_unit = (int(m.group(1) or 1), m.group(2)) if m else (1, "")
    for table, kind in ((_MEMORY_UNITS, "memory"), (_TIME_UNITS, "time")):
        if base_unit in table:
            if given not in table:
                return f"unit {given!r}: this setting's units are {', '.join(table)}"
            return number * table[given] / (table[base_unit] * base)
    return f"unit {given!r}: this setting takes a number without unit"


def _unit_hint(unit: str | None) -> str:
    return f" (in {unit})" if unit else ""
