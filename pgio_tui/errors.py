"""The user-facing error and the one-line printer: importable from every layer.

A command (or anything it calls) raises `CliError("what went wrong: what to do")`; `cli.main`
prints it with `error_line` and exits with its status (1; 2 for a failed connection, as psql). Nothing here imports the rest of pgio_tui
(safe_text, stdlib only, excepted).
"""

from __future__ import annotations

import sys

from pgio_tui.safe_text import printable

PROG = "pgio-tui"


class CliError(Exception):
    """A one-line message for the user; the command exits with `status` (1)."""

    status = 1


class ConnectError(CliError):
    """The server could not be reached or refused us: exit status 2, as psql's."""

    status = 2


def say(text: str) -> None:
    """A line on stderr. stderr may be gone (ssh dropped, nohup): never let a status line kill a recording."""
    try:
        print(text, file=sys.stderr, flush=True)
    except OSError:
        pass


def error_line(message: object) -> None:
    """`pgio-tui: error: …` on stderr, one line whatever the message holds."""
    text = str(message).splitlines()[0] if str(message) else type(message).__name__
    say(f"{PROG}: error: {printable(text)}")  # a file or server may have put escapes in it
