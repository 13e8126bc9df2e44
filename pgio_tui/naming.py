"""How every command names the server it watched: one function, so the header, `info`, the picker,
diff and the report never call one server `127.0.0.1`, `vm` and `/var/run/postgresql` by turns.

The name is the database host's machine name: the client's own name when the server was reached
through a unix socket or loopback (the same machine), else the host as given; `:port` when not
5432, `/dbname` when known.
"""

from __future__ import annotations

from typing import Any

LOOPBACK = ("localhost", "127.0.0.1", "::1")


def machine_of(host: str | None, client_host: str | None) -> str | None:
    """The database host's machine name, from the connection's host and the client's name."""
    host = str(host or "")
    if not host or host.startswith("/") or host in LOOPBACK:
        return client_host or (host if host and not host.startswith("/") else None) or "local"
    return host


def server_name(meta: dict[str, Any], *, dbname: bool = True) -> str:
    """`machine[:port][/dbname]` for a recording's (or a live sampler's) metadata."""
    name = machine_of(meta.get("host"), meta.get("client_host")) or "?"
    port = str(meta.get("port") or "")
    if port and port != "5432":
        name += f":{port}"
    if dbname and meta.get("dbname"):
        name += f"/{meta['dbname']}"
    return name


def connection_text(meta: dict[str, Any]) -> str:
    """What `info` says about the connection: the conninfo given, or who/where it resolved to."""
    given = str(meta.get("conninfo") or "").strip()
    user = meta.get("user")
    resolved = f"{user + '@' if user else ''}{server_name(meta)}"
    return f"{given}  ({resolved})" if given else f"{resolved} (from PG* variables and libpq defaults)"
