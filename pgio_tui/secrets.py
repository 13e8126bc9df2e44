"""Passwords never leave the process: not into a recording, a status line or a log.

One place that knows what a secret looks like in a conninfo string, a URI or a command line.
"""

from __future__ import annotations

import re
import sys

# URI userinfo `scheme://user:secret@` (libpq stops the userinfo at the first '@' or '/').
_URI_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*):[^\s/@]*@", re.I)
# URI query parameter `?password=secret&...`.
_QUERY_PASSWORD = re.compile(r"([?&])(?:ssl)?password=[^&#\s]*(?:&|(?=[#\s]|$))", re.I)
# conninfo / environment `password=secret`, `password = 'se cret'`, `PGPASSWORD=secret`.
_KV_PASSWORD = re.compile(
    r"(?<![\w])(?:pg)?(?:ssl)?password\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S*)\s*", re.I
)


def scrub_secrets(text: str) -> str:
    """`text` without passwords: drops `password=...` pairs of conninfo strings and the
    `:password@` of URIs, so nothing secret ever reaches a recording."""
    text = _URI_PASSWORD.sub(r"\1@", text)
    text = _QUERY_PASSWORD.sub(r"\1", text)
    return _KV_PASSWORD.sub("", text).rstrip() if _KV_PASSWORD.search(text) else text


def command_line(prog: str = "pgio-tui") -> str:
    """This process's command line as the user typed it, fit to store."""
    return scrub_secrets(" ".join([prog, *sys.argv[1:]]))
