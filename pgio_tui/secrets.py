"""Passwords never leave the process: not into a recording, a status line or a log.

The one place that knows what a secret looks like. A connection string or URI is read by libpq's
own parser (psycopg.conninfo), so whatever libpq would take as a password (quoted, backslash-
escaped, percent-encoded in a URI, `?password=` in a query) is what is dropped; the string is then
rebuilt by make_conninfo. Free text (an event, a workload's output line) may quote a connection
string: there every `password=` value is cut as libpq would read it, every URI's `:password@` and
`password=` parameter too, and any password this process was given (by CONN, -d or PGPASSWORD)
is replaced wherever it appears.

A statement text (pg_stat_statements, a recording, experiment.json) is SQL: scrub_statement reads
its string literals as the server does ('' doubled, E'' with backslashes, $tag$…$tag$, and one cut
short at the end) and masks a literal that follows the word PASSWORD (ALTER/CREATE ROLE … [ENCRYPTED]
PASSWORD '…', USER MAPPING … OPTIONS (password '…')), and the password inside any literal that holds a
connection string or URI (dblink, dblink_connect, CREATE SUBSCRIPTION … CONNECTION).
"""

from __future__ import annotations

import os
import re
import sys

SECRET_KEYS = ("password", "sslpassword")
MASK = "********"
MIN_KNOWN = 4  # shorter passwords are not replaced in free text: they would mangle every word
_known: set[str] = set()


class _Pattern:
    """A regex compiled at its first use, not at import: every command imports this module, and its
    patterns took ~1.2 ms to compile, which replay's first frame waited for."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args) -> None:
        self._args = args
        self._compiled: re.Pattern | None = None

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


# In free text: a conninfo `password=` value as libpq reads one (single-quoted with backslash
# escapes, or up to the first unescaped blank); a URI's userinfo password; a URI `password=` param.
_KV_PASSWORD = _Pattern(r"(?<![\w])(?:pg)?(?:ssl)?password\s*=\s*(?:'(?:[^'\\]|\\.)*'?|(?:[^\s\\]|\\.?)*)\s*",
                        re.I)
_URI_PASSWORD = _Pattern(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*):[^\s/@]*@", re.I)
_SECRET_KEY = _Pattern(r"(?:pg)?(?:ssl)?pass(?:word)?", re.I)
_QUERY_PASSWORD = _Pattern(r"([?&])(?:ssl)?password=[^&#\s]*(?:&|(?=[#\s]|$))", re.I)


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
    text = _mask_known(text)
    text = _URI_PASSWORD.sub(r"\1@", text)
    text = _QUERY_PASSWORD.sub(r"\1", text)
    return _KV_PASSWORD.sub("", text).rstrip() if _KV_PASSWORD.search(text) else text


def in_conninfo(conninfo: str) -> bool:
    """Whether a connection string or URI holds a password (libpq reads it as one)."""
    from psycopg.conninfo import conninfo_to_dict
    try:
        return any(k in conninfo_to_dict(conninfo) for k in SECRET_KEYS)
    except Exception:  # psycopg.ProgrammingError: not one libpq can read
        return False


# SQL as the server reads it: comments, quoted identifiers, words and the string literals.
_SQL_TOKEN = _Pattern(r"""
    (?P<comment>--[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|$))
  | (?P<ident>"(?:[^"]|"")*"?)
  | (?P<estr>[eE]'(?:[^'\\]|''|\\.?)*'?)
  | (?P<str>'(?:[^']|'')*'?)
  | (?P<dollar>(?P<tag>\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$)(?s:.*?)(?:(?P=tag)|$))
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
""", re.X | re.S)
_PASSWORD_WORD = _Pattern(r'"?(?:ssl)?password"?', re.I)
_LITERAL_MASK = f"'{MASK}'"


def _mask_known(text: str) -> str:
    _remember_env()
    for secret in _known:
        text = text.replace(secret, MASK)
    return text


def _scrub_literal(token: str, kind: str) -> str:
    """A string literal with the password of a connection string or URI in it masked."""
    if kind == "dollar":
        tag = token[:token.index("$", 1) + 1]
        closed = len(token) >= 2 * len(tag) and token.endswith(tag)
        body = token[len(tag):len(token) - len(tag) if closed else None]
        return tag + _conninfo_text(body) + (tag if closed else "")
    start = 2 if kind == "estr" else 1
    closed = len(token) > start and token.endswith("'") and not _open_quote(token[start:-1], kind)
    body = token[start:-1 if closed else None]
    raw = body.replace("''", "'") if kind == "str" else re.sub(r"\\(.)|''", lambda m: m[1] or "'", body, flags=re.S)
    if not re.search(r"password|://", raw, re.I):
        return token
    new = _conninfo_text(raw)
    if new == raw:
        return token
    new = new.replace("'", "''") if kind == "str" else new.replace("\\", "\\\\").replace("'", "\\'")
    return token[:start] + new + ("'" if closed else "")


def _open_quote(body: str, kind: str) -> bool:
    """Is the literal's last quote an escaped one (then the literal runs to the end of the text)?"""
    if kind == "estr":
        return (len(body) - len(body.rstrip("\\"))) % 2 == 1
    return False


def _conninfo_text(text: str) -> str:
    """Free text holding connection strings or URIs: every `password=` value and URI password masked."""
    text = _URI_PASSWORD.sub(lambda m: f"{m[1]}:{MASK}@", text)
    text = _QUERY_PASSWORD.sub(lambda m: f"{m[1]}password={MASK}" + ("&" if m[0].endswith("&") else ""), text)
    return _KV_PASSWORD.sub(lambda m: f"password={MASK}" + (" " if m[0][-1:].isspace() else ""), text)


def scrub_statement(text: str) -> str:
    """A statement's text without passwords: the literal after PASSWORD masked, the password in a
    literal holding a connection string masked, any password this process was given masked. The one
    scrubber of statement texts: the tracker of pg_stat_statements, the reader of recordings and of
    experiment folders call it where a text comes in."""
    text = _mask_known(str(text))
    if not re.search(r"password|://", text, re.I):
        return text
    out: list[str] = []
    last_word = ""
    pos = 0
    for m in _SQL_TOKEN.finditer(text):
        gap = text[pos:m.start()]
        if gap.strip(" \t\r\n="):
            last_word = ""  # PASSWORD counts only right before its literal (blanks, `=` or a comment between)
        out.append(gap)
        kind = m.lastgroup if m.lastgroup != "tag" else "dollar"
        token = m[0]
        if kind in ("str", "estr", "dollar"):
            token = _LITERAL_MASK if last_word == "password" else _scrub_literal(token, kind)
            last_word = ""
        elif kind != "comment":
            last_word = "password" if _PASSWORD_WORD.fullmatch(token) else token.lower()
        out.append(token)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


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
