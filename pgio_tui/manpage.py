"""The manual page, made from the argparse parser: `pgio-tui --print-man`, and the copy installed in
share/man/man1 with the package (man/pgio-tui.1, kept equal to this by tests/test_cli_extras.py).
One section per command: its usage, its description, its options with their help."""

from __future__ import annotations

import argparse

from pgio_tui import __version__

_TAIL = r"""
.SH CONNECTION
CONN, \-h, \-p, \-U, \-d, \-w and \-W work as in psql; the PG* variables, ~/.pgpass and service files apply.
.SH FILES
.TP
.I $XDG_CONFIG_HOME/pgio\-tui/config.toml
Defaults (~/.config when XDG_CONFIG_HOME is unset): interval, theme, the connection (host, port, user,
dbname, service), [experiment] (repeat, order, warmup, dirty_wait, discard_first, init_scale, interval),
and [profiles.NAME] tables chosen with \-\-profile NAME. The command line wins. Never a password: the file
is refused if it holds one.
.TP
.I $XDG_CONFIG_HOME/pgio\-tui/themes/
The user's colour themes.
.SH EXIT STATUS
0 when done, 1 on an error (one line on standard error), 2 for a usage error, an unknown command, a
malformed config file or a failed connection (as psql), 130 when interrupted.
.SH SEE ALSO
.BR psql (1),
.BR pgbench (1)
"""


def _roff(text: str) -> str:
    """Plain text made safe for roff: backslashes and hyphens escaped, no line starting with . or '."""
    out = str(text).replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line[:1] in (".", "'") else line for line in out.splitlines())


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    text = action.help or ""
    if "%(" in text:
        try:
            text = text % {**vars(action), "prog": parser.prog}
        except (KeyError, TypeError, ValueError):
            pass
    return text


def _section(parser: argparse.ArgumentParser, name: str) -> list[str]:
    out = [f".SS {_roff(name)}", ".nf", _roff(parser.format_usage().strip()), ".fi"]
    if parser.description:
        out += [".PP", _roff(parser.description)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else f" {action.metavar or action.dest.upper()}"
            head = ", ".join(f"\\fB{_roff(o)}\\fR" for o in action.option_strings) + _roff(metavar)
        else:
            head = f"\\fI{_roff(str(action.metavar or action.dest))}\\fR"
        out += [".TP", head, _roff(_help(action, parser)) or "\\&"]
    if parser.epilog:
        out += [".PP", _roff(parser.epilog)]
    return out


def _walk(parser: argparse.ArgumentParser, name: str) -> list[str]:
    out = _section(parser, name)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                out += _walk(sub, f"{name} {sub_name}")
    return out


def render(parser: argparse.ArgumentParser) -> str:
    """The page; usages wrapped at 100 columns whatever the terminal, so the installed copy stays equal."""
    import os
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        return _page(parser)
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _page(parser: argparse.ArgumentParser) -> str:
    prog, title = parser.prog, _roff(parser.prog.upper())
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = [f'.TH {title} 1 "" "{prog} {__version__}" "User Commands"',
             ".SH NAME", f"{_roff(prog)} \\- {_roff(parser.description or '')}",
             ".SH SYNOPSIS", f"\\fB{_roff(prog)}\\fR [\\fICOMMAND\\fR] [\\fIoptions\\fR] [\\fICONN\\fR]",
             ".SH DESCRIPTION",
             _roff(f"Without a COMMAND, {prog} is the live monitor (live). A first word that is no command is a "
                   "database name, as in psql; when no database of that name can be connected to, or more words "
                   "follow it, it is an unknown command and the nearest command is suggested."),
             ".SH COMMANDS"]
    for choice in commands._choices_actions:
        lines += [".TP", f"\\fB{_roff(choice.dest)}\\fR", _roff(choice.help or "")]
    lines += [".SH OPTIONS"] + _section(parser, prog)[6 if parser.description else 4:]
    for name, sub in commands.choices.items():
        lines += [f".SH {_roff(name.upper())}"] + _walk(sub, f"{prog} {name}")
    return "\n".join(lines) + _TAIL
