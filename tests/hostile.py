"""Hostile recordings: the fixture recording with attacker-chosen text in every field a person
sees (escape sequences, OSC 52 / OSC 8, markup that clicks, markup that does not parse, formulas,
raw HTML). Shared by the untrusted-text tests and the fuzz test."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

ESC = "\x1b"
# Clear the screen, set the pane title, write the clipboard (OSC 52), a fake link (OSC 8), a bell.
ESCAPES = f"{ESC}[2J{ESC}]0;pwned\x07{ESC}]52;c;cHduZWQ=\x07{ESC}]8;;http://evil/\x07link{ESC}]8;;\x07\x9b"
MARKUP = "[@click=app.screenshot('pwn.svg','/tmp/x')]CLICKME[/] [/] [bold"
FORMULA = "=HYPERLINK(\"http://evil\")"
HTML = "<script>alert(1)</script><img src=x onerror=alert(2)>"
# Invisible or reordering: a bidi mark, line and paragraph separators, a soft hyphen, tag characters.
INVISIBLE = "\u061c\u2028\u2029\u00ad\U000e0001\U000e0041"
PAYLOAD = f"{ESCAPES}{MARKUP}{HTML}{INVISIBLE}"


def make_hostile(src: Path, dst: Path, payload: str = PAYLOAD) -> Path:
    """A copy of recording `src` at `dst` whose names and texts carry `payload`."""
    shutil.copyfile(src, dst)
    with sqlite3.connect(dst) as c:
        for key in ("host", "conninfo", "command_line", "server_version", "os"):
            c.execute("UPDATE meta SET value = ? || value WHERE key = ?", (payload, key))
        c.execute("UPDATE devices SET name = ? || name", (payload,))
        c.execute("UPDATE sources SET backend_type = ? || backend_type", (payload,))
        c.execute("UPDATE wait_events SET wait_event = ? || wait_event, wait_event_type = ? || wait_event_type",
                  (payload, payload))
        c.execute("UPDATE settings SET value = ? || value WHERE rowid % 2 = 0", (payload,))
        c.execute("UPDATE settings SET name = ? || name WHERE rowid % 3 = 0", (payload,))
        c.execute("UPDATE events SET text = ? || coalesce(text, '')", (payload,))
        c.execute("UPDATE workload_output SET line = ? || line", (payload,))
        c.execute("UPDATE workloads SET argv = json_array(?, 'pgbench')", (payload,))
        c.execute("UPDATE checkpoints SET kind = ? || kind WHERE id % 2 = 0", (FORMULA,))
        c.execute('UPDATE ticks SET "checkpoint.kind" = ? WHERE "checkpoint.kind" IS NOT NULL', (FORMULA,))
        c.execute("INSERT INTO settings (name, value, unit, category) VALUES (?, ?, NULL, 'postgres')",
                  (FORMULA, FORMULA))
    return dst
