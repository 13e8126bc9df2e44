"""Passwords never leave the process: not into a recording, a status line or a log.

The one place that knows what a secret looks like. A connection string or URI is read by libpq's
own parser (psycopg.conninfo), so whatever libpq would take as a password (quoted, backslash-
escaped, percent-encoded in a URI, `?password=` in a query) is what is dropped; the string is then
rebuilt by make_conninfo. Free text (an event, a workload's output line) may quote a connection
string: there every `password=` value is cut as libpq would read it, every URI's `:password@` and
`password=` parameter too, and any password this process was given (by CONN, -d or PGPASSWORD)
is replaced wherever it appears.
"""

from __future__ import annotations

import os
import re
import sys

SECRET_KEYS = ("password", "sslpassword")
MASK = "********"
MIN_KNOWN = 4  # shorter passwords are not replaced in free text: they would mangle every word
_known: set[str] = set()

# In free text: a conninfo `password=` value as libpq reads one (single-quoted with backslash
# escapes, or up to the first unescaped blank); a URI's userinfo password; a URI `password=` param.
_KV_PASSWORD = re.compile(r"(?<![\w])(?:pg)?(?:ssl)?password\s*=\s*(?:'(?:[^'\\]|\\.)*'?|(?:[^\s\\]|\\.?)*)\s*",
                          re.I)
_URI_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*):[^\s/@]*@", re.I)
_SECRET_KEY = re.compile(r"(?:pg)?(?:ssl)?pass(?:word)?", re.I)
_QUERY_PASSWORD = re.compile(r"([?&])(?:ssl)?password=[^&#\s]*(?:&|(?=[#\s]|$))", re.I)


def remember(password: str | None) -> None:
    """A password this process uses: it is masked wherever it shows up in stored text."""
    if password and len(password) >= MIN_KNOWN:
        _known.add(password)


def scrub_conninfo(dsn: str) -> str | None:
    """`dsn` without its password keys, parsed and rebuilt by libpq; None when libpq cannot parse
    it (not a connection string). A string without a password comes back unchanged."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo  # when needed: replay never connects
    try:
        params = conninfo_to_dict(dsn)
    except Exception:  # psycopg.ProgrammingError: not a conninfo string or URI
        return None
    secrets = {k: params.pop(k) for k in SECRET_KEYS if k in params}
    if not secrets:
        return dsn
    for value in secrets.values():
        remember(None if value is None else str(value))
    return make_conninfo("", **params)


def scrub_secrets(text: str) -> str:
    """`text` without passwords: a connection string or URI through libpq (scrub_conninfo), other
    text with `password=` values, URI passwords and the passwords we know removed."""
    text = str(text)
    if "=" in text or "://" in text:
        parsed = scrub_conninfo(text)
        if parsed is not None:
            return parsed
    _remember_env()
    for secret in _known:
        text = text.replace(secret, MASK)
    text = _URI_PASSWORD.sub(r"\1@", text)
    text = _QUERY_PASSWORD.sub(r"\1", text)
    return _KV_PASSWORD.sub("", text).rstrip() if _KV_PASSWORD.search(text) else text


def is_secret_key(name) -> bool:
    """A dict key naming a password (PGPASSWORD, password, sslpassword, pass): its value is dropped."""
    return bool(_SECRET_KEY.fullmatch(str(name)))


def scrub_value(value):
    """scrub_secrets applied through dicts and lists; keys named like a password are dropped."""
    if isinstance(value, str):
        return scrub_secrets(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items() if not is_secret_key(k)}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    return value


def scrub_argv(argv: list[str]) -> list[str]:
    """Each argument scrubbed on its own: a `-d` conninfo or URI is one argument, whatever its
    blanks and backslashes."""
    return [scrub_secrets(a) for a in argv]


def command_line(prog: str = "pgio-tui") -> str:
    """This process's command line as the user typed it (shell-quoted), fit to store."""
    import shlex  # recording only: the live view starts without it

    return shlex.join([prog, *scrub_argv(sys.argv[1:])])


def _remember_env() -> None:
    remember(os.environ.get("PGPASSWORD"))
