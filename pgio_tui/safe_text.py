"""Untrusted text shown as text: the one place that knows how.

Recordings are files people send each other, and server strings (settings, wait events, host
names, log lines, query text) are written by whoever can connect. Such text is data: it must never
move the terminal (escape sequences, OSC 52/8, a clear screen), be parsed as markup, run as a
spreadsheet formula, or become HTML. Each output asks here for the form it needs:

- printable(): control and invisible characters (C0, DEL, C1, Unicode format characters such as
  bidi marks and tags, line/paragraph separators) as visible escapes (`\\x1b`, `\\u061c`);
- plain_text(): a rich Text of printable() text, never parsed as markup (the TUI, rich tables);
- csv_cell(): printable(), and a leading `= + - @` neutralised with `'` unless the cell is a number;
- markdown_cell(): printable(), raw HTML escaped, `|` escaped;
- html_text(): printable(), HTML escaped;
- capped(): a name or a line cut to LABEL_CHARS or LINE_CHARS.

No dependency beyond the standard library (rich is imported only by plain_text), so every layer
may import it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text

# C0, DEL and C1 are always escaped; beyond ASCII, whatever str.isprintable() refuses except spaces
# (Zs) and private-use characters (Co): the format characters (Cf: bidi marks, overrides and
# isolates, zero-width joiners, the soft hyphen, the BOM, the tag characters U+E0001 and
# U+E0020-E007F), line and paragraph separators (Zl, Zp), lone surrogates (Cs) and code points this
# Python's Unicode does not know (Cn, a format character of a later Unicode perhaps): a terminal or
# a browser acts on them, hides them, or breaks the line there.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]|[^\x00-\x7f]")
_CONTROL_KEEP_NL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]|[^\x00-\x7f]")
_SHOWN = ("Zs", "Co")  # not printable for Python, harmless on a screen
# Every text from a file or a server that becomes a label, a cell or a line is cut to one of these
# (capped()): output stays within a small multiple of its input (an OpenMetrics label is repeated on
# every sample, a device name in every column name), and a row stays readable.
LABEL_CHARS = 256  # a name: host, device, application, backend type, wait event, setting name, unit
LINE_CHARS = 4096  # a value or a line: a setting's value, an event, an output or log line, a statement
_FORMULA_START = ("=", "+", "-", "@")
_NUMBER = re.compile(r"[-+]?(\d[\d,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def _escape(m: re.Match) -> str:
    ch = m.group()
    c = ord(ch)
    if c < 0xa0:
        return f"\\x{c:02x}"
    if ch.isprintable() or unicodedata.category(ch) in _SHOWN:
        return ch
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def printable(value, newlines: bool = False) -> str:
    """str(value) with every control and invisible character written as a visible escape (ESC ->
    `\\x1b`, U+2028 -> `\\u2028`, a tag character -> `\\U000e0041`). With newlines=True a line feed is kept (multi-line text such as help or a log excerpt)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return (_CONTROL_KEEP_NL if newlines else _CONTROL).sub(_escape, text)


def capped(value: str | None, limit: int) -> str | None:
    """`value` cut to `limit` characters when longer: its start and its end around a `…` (names
    that differ at their end stay apart). None stays None."""
    if value is None or len(value) <= limit:
        return value
    head = limit // 2
    return value[:head] + "…" + value[len(value) - (limit - head - 1):]


def plain_text(value, style: str | Style = "", **kw) -> Text:
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
