"""Untrusted text shown as text: the one place that knows how.

Recordings are files people send each other, and server strings (settings, wait events, host
names, log lines, query text) are written by whoever can connect. Such text is data: it must never
move the terminal (escape sequences, OSC 52/8, a clear screen), be parsed as markup, run as a
spreadsheet formula, or become HTML. Each output asks here for the form it needs:

- printable(): control characters (C0, DEL, C1, bidi overrides) as visible escapes (`\\x1b`);
- plain_text(): a rich Text of printable() text, never parsed as markup (the TUI, rich tables);
- csv_cell(): printable(), and a leading `= + - @` neutralised with `'` unless the cell is a number;
- markdown_cell(): printable(), raw HTML escaped, `|` escaped;
- html_text(): printable(), HTML escaped.

No dependency beyond the standard library (rich is imported only by plain_text), so every layer
may import it.
"""

from __future__ import annotations

import re

# C0, DEL, C1, and the Unicode format characters that reorder or hide text (bidi overrides and
# isolates, zero-width joiners, the BOM): a terminal or a browser acts on them.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_CONTROL_KEEP_NL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_FORMULA_START = ("=", "+", "-", "@")
_NUMBER = re.compile(r"[-+]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(value, newlines: bool = False) -> str:
    """str(value) with every control character written as a visible escape (ESC -> `\\x1b`).
    With newlines=True a line feed is kept (multi-line text such as help or a log excerpt)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return (_CONTROL_KEEP_NL if newlines else _CONTROL).sub(_escape, text)


def plain_text(value, style: str = "", **kw):
    """A rich Text holding printable(value): shown as it is, never parsed as markup. Textual
    accepts it wherever it takes a string (Static, Label, border titles, table cells)."""
    from rich.text import Text
    return Text(printable(value), style=style, **kw)


def csv_cell(value):
    """A CSV cell that a spreadsheet shows as text: numbers unchanged, strings printable and,
    when they start like a formula (= + - @) but are not a number, prefixed with `'`."""
    if not isinstance(value, str):
        return value
    text = printable(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def markdown_cell(value) -> str:
    """Text for a markdown table cell or line: printable, raw HTML escaped (`&` and `<`: no tag
    can open), `|` escaped."""
    return printable(value).replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def html_text(value) -> str:
    """Text for HTML (element content or a quoted attribute): printable and escaped."""
    import html  # reports only: the live view and replay start without it

    return html.escape(printable(value))
