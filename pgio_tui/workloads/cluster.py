"""The lab cluster: a throwaway PostgreSQL for tests, benchmarks and `pgio-tui demo`.

initdb into a temporary directory, unix socket only, a free port. PostgreSQL refuses to run as
root, so under root the server runs as a dedicated unprivileged OS user (LAB_USER) while we (root)
stay the client. The cluster is private: base folder, data and socket directory 0700 owned by the
server's user, socket 0700, no TCP listener; only that user and root can connect (the superuser
can run programs as the server's user, so nobody else may reach it). Its life is tied to ours: a
watchdog process stops the server if we die without stopping it, and a later run removes lab
folders whose owner is gone. Textual-free, like all of the core.
"""

from __future__ import annotations

import atexit
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pgio_tui.sources.postgres import scalar
from pgio_tui.workloads.lab_user import MIRROR_DIR, can_reach, reachable_bindir, server_user, temp_root
from pgio_tui.workloads.pg_binaries import (HINT, TIMEOUT_S, ClusterError, find_bindir, find_client, has_server,
                                          server_version)
from pgio_tui.workloads.watchdog import OWNER_FILE, Watchdog, remove_stale_labs, write_mark

SUPERUSER = "postgres"
# What the monitor needs to see: statements, I/O timing, checkpoint log lines in one fixed file;
# and what keeps it private: no TCP listener, a socket only its owner (and root) may open.
DEFAULT_SETTINGS = {
    "listen_addresses": "",
    "unix_socket_permissions": "0700",
    "shared_preload_libraries": "pg_stat_statements",
    "track_io_timing": "on",
    "log_checkpoints": "on",
    "logging_collector": "on",
    "log_directory": "log",
    "log_filename": "postgresql.log",
    "lc_messages": "C",
    "log_line_prefix": "%m [%p] ",
}
SOCKET_PATH_MAX = 107  # sizeof(sun_path) - 1 on Linux
PORT_CLASH = re.compile(r'lock file "[^"]*\.s\.PGSQL\.\d+\.lock" already exists|could not bind|Address already in use')
START_ATTEMPTS = 5


def free_port() -> int:
    """A TCP port nobody listens on now (it also names the unix socket file)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



# ---------------------------------------------------------------- the cluster

_live: dict[int, "Cluster"] = {}  # clusters with a running server or a temp dir to remove at exit


@atexit.register
def _cleanup_at_exit() -> None:
    """No postmaster outlives the Python process that started it."""
    for cluster in list(_live.values()):
        if cluster._owner_pid == os.getpid():
            try:
                if cluster._owns_base_dir:
                    cluster.destroy()
                else:
                    cluster.stop()
            except Exception:  # noqa: BLE001 - best effort at exit; the rest must still be cleaned up
                pass


class Cluster:
    """One PostgreSQL data directory and its server; `with Cluster() as c:` inits, starts, destroys."""

    def __init__(self, bindir: str | Path | None = None, base_dir: str | Path | None = None,
                 port: int | None = None, settings: dict[str, str] | None = None, name: str = "pgio",
                 temp_dir: str | Path | None = None):
        self.bindir = Path(bindir) if bindir else find_bindir()
        if not has_server(self.bindir):
            raise ClusterError(f"{self.bindir} lacks initdb, pg_ctl or postgres: {HINT}")
        self.version, self.major = server_version(self.bindir)
        self._user = server_user()
        self.os_user = (self._user or pwd.getpwuid(os.geteuid())).pw_name
        self._owns_base_dir = base_dir is None
        if base_dir is None:
            root = Path(temp_dir) if temp_dir else temp_root(self._user)
            remove_stale_labs(root, {os.geteuid(), *([self._user.pw_uid] if self._user else [])})
            base_dir = tempfile.mkdtemp(prefix=f"{name}-lab-", dir=root)  # 0700
            write_mark(Path(base_dir), os.getpid())
        self.base_dir = Path(base_dir).resolve()
        self.base_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not can_reach(self.base_dir.parent, self._user):
            raise ClusterError(f"user {self.os_user} cannot reach {self.base_dir}: choose a base_dir under /tmp")
        self._private(self.base_dir)
        self._server_bindir = reachable_bindir(self.bindir, self._user, self.base_dir)
        self._watchdog = Watchdog()
        self.datadir = self.base_dir / "data"
        self.sockdir = self.base_dir / "sock"
        self._auto_port = port is None
        self.port = port or free_port()
        self.name = name
        self.settings = {**DEFAULT_SETTINGS, "cluster_name": name, **{k: str(v) for k, v in (settings or {}).items()}}
        self._owner_pid = os.getpid()
        if self._owns_base_dir:
            _live[id(self)] = self

    def __repr__(self) -> str:
        return f"<Cluster PostgreSQL {self.version} {self.datadir} port {self.port}>"

    def __enter__(self) -> "Cluster":
        try:
            self.init()
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.destroy()

    # -- lifecycle

    def init(self) -> None:
        """initdb with our settings appended to postgresql.conf; a no-op for an existing data dir."""
        if (self.datadir / "PG_VERSION").exists():
            return
        self._run("initdb", "-D", self.datadir, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "-N")
        lines = ["", "# pgio-tui lab cluster"] + [f"{k} = {_conf_quote(v)}" for k, v in self.settings.items()]
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.write("\n".join(lines) + "\n")

    def start(self) -> None:
        """pg_ctl start -w on the unix socket only; a port clash moves an automatic port and retries."""
        if self.running:
            return
        self.init()
        self.sockdir.mkdir(mode=0o700, exist_ok=True)
        self._private(self.sockdir)
        for _ in range(START_ATTEMPTS):
            socket_path = self.sockdir / f".s.PGSQL.{self.port}"
            if len(str(socket_path)) > SOCKET_PATH_MAX:
                raise ClusterError(f"socket path {socket_path} is longer than {SOCKET_PATH_MAX} bytes: use a shorter base_dir")
            startup_log = self.base_dir / "startup.log"
            seen = startup_log.stat().st_size if startup_log.exists() else 0
            opts = f"-p {self.port} -k {shlex.quote(str(self.sockdir))} -c listen_addresses=''"
            r = self._run("pg_ctl", "-D", self.datadir, "-l", startup_log, "-o", opts, "-w", "-t", str(TIMEOUT_S),
                          "start", check=False)
            if r.returncode == 0:
                _live[id(self)] = self
                try:
                    self._watchdog.arm(self.postmaster_pid, self.base_dir, remove=self._owns_base_dir)
                    if self._owns_base_dir:  # a later run stops this very postmaster if we are killed
                        write_mark(self.base_dir, self._owner_pid, self.postmaster_pid)
                except OSError as e:
                    self.stop("immediate")
                    raise ClusterError(f"cannot start the lab cluster's watchdog ({e}): the server is stopped; "
                                       "check that the Python interpreter can run") from None
                return
            new_lines = startup_log.read_text(errors="replace")[seen:] if startup_log.exists() else ""
            if not (self._auto_port and PORT_CLASH.search(new_lines + self._log_tail(20))):
                break
            self.port = free_port()
        raise ClusterError(f"PostgreSQL {self.version} did not start on port {self.port} "
                           f"(see {self.base_dir}); last log lines:\n{self._log_tail()}")

    def stop(self, mode: str = "fast") -> None:
        """pg_ctl stop -w -m mode (smart, fast, immediate); a no-op when not running."""
        if self.running:
            r = self._run("pg_ctl", "-D", self.datadir, "-m", mode, "-w", "-t", str(TIMEOUT_S), "stop", check=False)
            if r.returncode != 0 and self.running:
                raise ClusterError(f"pg_ctl stop -m {mode} failed: {_last_line(r)}; try mode='immediate'")
        self._watchdog.disarm()
        if not self._owns_base_dir:
            _live.pop(id(self), None)

    def restart(self) -> None:
        self.stop()
        self.start()

    def destroy(self) -> None:
        """Stop the server and remove what we created (the whole base dir when we made it)."""
        try:
            self.stop()
        except ClusterError:
            self.stop("immediate")
        if self._owns_base_dir:
            shutil.rmtree(self.base_dir, ignore_errors=True)
        else:
            for p in (self.datadir, self.sockdir, self.base_dir / MIRROR_DIR):
                shutil.rmtree(p, ignore_errors=True)
            (self.base_dir / "startup.log").unlink(missing_ok=True)
        _live.pop(id(self), None)

    @property
    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid, from postmaster.pid, or None."""
        try:
            pid = int((self.datadir / "postmaster.pid").read_text().split("\n", 1)[0])
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    @property
    def running(self) -> bool:
        return self.postmaster_pid is not None

    # -- clients

    def conninfo(self, dbname: str = "postgres") -> str:
        return make_conninfo("", host=str(self.sockdir), port=str(self.port), user=SUPERUSER, dbname=dbname)

    def connect(self, dbname: str = "postgres", **kw) -> psycopg.Connection:
        """A psycopg connection, autocommit unless told otherwise."""
        kw.setdefault("autocommit", True)
        return psycopg.connect(self.conninfo(dbname), **kw)

    def psql(self, sql_text: str, dbname: str = "postgres") -> str:
        """Run SQL through psql (-X -A -t, stop on error) and return its output."""
        r = subprocess.run([str(find_client("psql")), "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", self.conninfo(dbname),
                            "-c", sql_text], capture_output=True, text=True, timeout=TIMEOUT_S)
        if r.returncode != 0:
            raise ClusterError(f"psql failed: {_last_line(r)}")
        return r.stdout

    def set(self, **settings) -> bool:
        """ALTER SYSTEM each setting, then reload, or restart if one needs it; True if restarted."""
        settings = {k.lower(): v for k, v in settings.items()}
        with self.connect() as conn:
            contexts: dict[str, str] = dict(conn.execute("select name, context from pg_settings where name = any(%s)",
                                         [list(settings)]).fetchall())
            unknown = sorted(set(settings) - set(contexts))
            if unknown:
                raise ClusterError(f"unknown setting(s) {', '.join(unknown)}: check the names in pg_settings")
            for name, value in settings.items():
                try:
                    conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.SQL(".").join(map(sql.Identifier, name.split("."))), _sql_value(value)))
                except psycopg.Error as e:
                    raise ClusterError(f"cannot set {name} = {value!r}: {e.diag.message_primary or e}") from None
            self.settings.update({k: _conf_value(v) for k, v in settings.items()})
            if "postmaster" in (contexts[k] for k in settings):
                conn.close()
                self.restart()
                return True
            loaded = scalar(conn, "select pg_conf_load_time()")
            conn.execute("select pg_reload_conf()")
        self._wait_for_reload(loaded)
        return False

    def _wait_for_reload(self, before) -> None:
        """Wait until the postmaster has re-read the config, so new sessions see the change."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            with self.connect() as conn:
                if scalar(conn, "select pg_conf_load_time()") > before:
                    return
            time.sleep(0.02)
        raise ClusterError(f"configuration reload not seen after {TIMEOUT_S} s: see {self.server_log_path()}")

    # -- logs

    def server_log_path(self) -> Path:
        """The file the logging collector writes (log_directory/log_filename, no % escapes)."""
        return self.datadir / self.settings["log_directory"] / self.settings["log_filename"]

    def log_text(self) -> str:
        """Everything the logging collector wrote so far, oldest file first."""
        logdir = self.server_log_path().parent
        files = sorted(logdir.iterdir(), key=lambda p: (p.stat().st_mtime, p.name)) if logdir.is_dir() else []
        return "".join(p.read_text(errors="replace") for p in files if p.is_file())

    def _log_tail(self, n: int = 15) -> str:
        """The last lines of the startup log and the server log, for error messages."""
        texts = []
        for p in (self.base_dir / "startup.log", self.server_log_path()):
            if p.exists():
                texts += p.read_text(errors="replace").splitlines()[-n:]
        return "\n".join(texts) or "(no log written)"

    # -- helpers

    def _run(self, program: str, *args, check: bool = True) -> subprocess.CompletedProcess:
        """Run a server program as the server user, in a directory that user can enter."""
        kw: dict[str, Any] = {}
        if self._user is not None:
            kw = dict(user=self._user.pw_uid, group=self._user.pw_gid,
                      extra_groups=os.getgrouplist(self._user.pw_name, self._user.pw_gid))
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        try:
            r = subprocess.run([str(self._server_bindir / program), *map(str, args)], cwd=self.base_dir, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_S * 1.5, **kw)
        except subprocess.TimeoutExpired:
            raise ClusterError(f"{program} did not finish in {TIMEOUT_S * 1.5:.0f} s; see {self.base_dir}") from None
        if check and r.returncode != 0:
            raise ClusterError(f"{program} failed: {_last_line(r)}")
        return r

    def _private(self, path: Path) -> None:
        """0700, owned by the server's user: nobody else may list, enter or connect through it."""
        if self._user is not None:
            os.chown(path, self._user.pw_uid, self._user.pw_gid)
        os.chmod(path, 0o700)


def _last_line(r: subprocess.CompletedProcess) -> str:
    lines = (r.stderr or r.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit status {r.returncode}"


def _conf_value(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ",".join(map(_conf_value, value))
    return str(value)


def _conf_quote(value) -> str:
    """A postgresql.conf value: always single-quoted, which every setting type accepts."""
    return "'" + _conf_value(value).replace("'", "''") + "'"


def _sql_value(value) -> sql.Composable:
    """ALTER SYSTEM's value: lists become several literals (shared_preload_libraries = 'a', 'b')."""
    if isinstance(value, (list, tuple)):
        return sql.SQL(", ").join(sql.Literal(_conf_value(v)) for v in value)
    return sql.Literal(_conf_value(value))
