"""The user's defaults: `$XDG_CONFIG_HOME/pgio-tui/config.toml` (~/.config/pgio-tui/config.toml).

    interval = 2                 # seconds per tick, every command that samples
    theme = "nord"               # the TUI's colours
    service = "bench"            # the default connection: host, port, user, dbname or a service
    [experiment]                 # `experiment run`'s defaults
    repeat = 5
    [profiles.prod]              # chosen with --profile prod: its keys over the ones above
    service = "prod"
    [profiles.prod.experiment]
    repeat = 3

The command line wins over the file. Connection keys are defaults under the PG* variables, except
in a profile named with --profile, whose connection wins over them. Never a password here: the file
is plain text, so a password key is refused (~/.pgpass or a service file hold those).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pgio_tui.errors import CliError

CONNECTION = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE", "service": "PGSERVICE"}
COMMON = ("interval", "theme")  # to every command that has the option
EXPERIMENT = ("repeat", "order", "warmup", "restart_warmup", "dirty_wait", "discard_first", "init_scale", "interval")
MAX_BYTES = 256 * 1024
_SECRET = re.compile(r"password\s*=|://[^/@\s]*:[^/@\s]*@", re.IGNORECASE)


class Config:
    """What the file says, merged: the profile's keys over the top-level ones."""

    def __init__(self, path: Path | None = None, profile: str | None = None):
        self.path = path
        self.profile = profile
        self.common: dict[str, Any] = {}  # interval, theme
        self.connection: dict[str, str] = {}  # host, port, user, dbname, service
        self.experiment: dict[str, Any] = {}

    def apply_connection(self) -> None:
        """The connection keys as PG* variables: under the ones set already, over them for --profile."""
        for key, value in self.connection.items():
            if self.profile is not None:
                os.environ[CONNECTION[key]] = value
            else:
                os.environ.setdefault(CONNECTION[key], value)


def path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "pgio-tui" / "config.toml"


def load(profile: str | None = None) -> Config:
    """The file's defaults (empty when there is none), merged with `profile`'s; CliError, one line, for
    a malformed file, an unknown key or profile, or a password."""
    where = path()
    try:
        with open(where, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        if profile is not None:
            raise CliError(f"--profile {profile}: no config file ({where})") from None
        return Config()
    except OSError as exc:
        raise CliError(f"{where}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise CliError(f"{where}: larger than {MAX_BYTES // 1024} kB; is it the right file?")
    import tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CliError(f"{where}: not valid TOML: {str(exc).splitlines()[0]}") from None
    config = Config(path=where, profile=profile)
    profiles = data.pop("profiles", {})
    if not isinstance(profiles, dict):
        raise CliError(f"{where}: profiles: give tables, e.g. [profiles.prod]")
    _merge(config, data, where, "")
    for name, table in profiles.items():  # every profile checked (no password in any), one applied
        if not isinstance(table, dict):
            raise CliError(f"{where}: profiles.{name}: give a table, [profiles.{name}]")
        _merge(Config(), table, where, f"profiles.{name}.")
    if profile is not None:
        if profile not in profiles:
            import difflib
            near = difflib.get_close_matches(profile, profiles, n=1)
            raise CliError(f"--profile {profile}: not in {where} (profiles: {', '.join(profiles) or 'none'})"
                           + (f"; did you mean {near[0]}?" if near else ""))
        _merge(config, profiles[profile], where, f"profiles.{profile}.")
    return config


def _merge(config: Config, table: dict[str, Any], where: Path, prefix: str) -> None:
    for key, value in table.items():
        name = f"{prefix}{key}"
        _no_secret(key, value, where, name)
        if key == "experiment" and isinstance(value, dict):
            for k, v in value.items():
                _no_secret(k, v, where, f"{name}.{k}")
                _known(k, EXPERIMENT, where, f"{name}.{k}")
                config.experiment[k] = v
        elif key in CONNECTION:
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise CliError(f"{where}: {name}: give a string")
            config.connection[key] = str(value)
        else:
            _known(key, (*COMMON, *CONNECTION, "experiment"), where, name)
            config.common[key] = value


def _known(key: str, keys: tuple[str, ...], where: Path, name: str) -> None:
    if key not in keys:
        import difflib
        near = difflib.get_close_matches(key, keys, n=1)
        raise CliError(f"{where}: unknown key {name}" + (f"; did you mean {near[0]}?" if near else "")
                       + f" (keys: {', '.join(keys)})")


def _no_secret(key: str, value: Any, where: Path, name: str) -> None:
    if "password" in key.lower() or (isinstance(value, str) and _SECRET.search(value)):
        raise CliError(f"{where}: {name}: no passwords in the config file (plain text): use ~/.pgpass, "
                       "PGPASSFILE or -W")
