"""Which server log lines to believe: only the checkpointer's.

Any role can write `RAISE LOG 'checkpoint starting: time'`, so a checkpoint line counts only when
the log itself says the checkpointer wrote it:

* stderr: `log_line_prefix` is turned into a pattern of what the checkpointer's prefix looks
  like (it has no client, so %u %d %a %h %r %i are empty and %b is `checkpointer`), anchored at
  the start of the line, and its `%p` must be the checkpointer's PID (pg_stat_activity, or /proc
  on the database host). Continuation lines of a multi-line message start with a tab, so text
  inside a message cannot pose as a line. Without %p (or %b) before %q the format cannot tell:
  the caller falls back to counters and says why.
* csvlog: the process_id column (and backend_type, 13+); records may span lines (quoted newlines).
* jsonlog (15+): the `backend_type` and `pid` keys.

Textual-free; no I/O here: the caller hands in lines and the checkpointer's PID.
"""

from __future__ import annotations

import json
import re

from pgio_tui.sources.csvlog import CsvRecords

# An entry the checkpoint tracker reads: (the line's time stamp text or None, the message).
Entry = tuple[str | None, str]

_SEVERITY = r"(?:LOG|WARNING|NOTICE|INFO|DEBUG\d?):  (?:[0-9A-Z]{5}: )?"
_STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
# What each log_line_prefix escape prints for the checkpointer (a process without a client).
_ESCAPES = {
    "m": (rf"(?P<stamp>{_STAMP}\.\d{{3}} \S+)", True), "t": (rf"(?P<stamp>{_STAMP} \S+)", True),
    "s": (rf"{_STAMP} \S+", False), "n": (r"\d+\.\d{3}", False),
    "p": (r"(?P<pid>\d+)", True), "b": ("checkpointer", False),
    "c": (r"[0-9a-f]+\.[0-9a-f]+", False), "l": (r"\d+", False), "v": (r"\S*", False),
    "x": (r"\d+", False), "e": (r"[0-9A-Z]{5}", False), "Q": (r"-?\d+", False), "k": (r"\S*", False),
    "P": ("", False), "a": ("", False), "u": ("", False), "d": ("", False), "h": ("", False),
    "r": ("", False), "i": ("", False), "L": (r"\S*", False),
}
_ESCAPE = re.compile(r"%(-?\d*)([A-Za-z%])")


def prefix_pattern(prefix: str) -> tuple[re.Pattern, bool, bool]:
    """(pattern of the checkpointer's stderr line up to its message, has %p, has %b).

    `%q` ends the prefix for processes without a session, such as the checkpointer.
    """
    out, pos, has_pid, has_type, seen = [], 0, False, False, set()
    for m in _ESCAPE.finditer(prefix):
        out.append(re.escape(prefix[pos:m.start()]))
        pos = m.end()
        pad, esc = m.groups()
        if esc == "q":
            pos = len(prefix)
            break
        if esc == "%":
            out.append("%")
            continue
        rx, named = _ESCAPES.get(esc, (r"\S*", False))
        if named and esc in seen:  # a repeated %p or %m: match it again without a second group
            rx = re.sub(r"\(\?P<\w+>", "(?:", rx)
        seen.add(esc)
        has_pid |= esc == "p"
        has_type |= esc == "b"
        out.append(rf" *{rx} *" if pad else rx)
    out.append(re.escape(prefix[pos:]))
    return re.compile("^" + "".join(out) + _SEVERITY), has_pid, has_type


def log_format(logfile: str | None) -> str:
    """stderr, csvlog or jsonlog, from the file name pg_current_logfile() gave."""
    name = (logfile or "").lower()
    return "csvlog" if name.endswith(".csv") else "jsonlog" if name.endswith(".json") else "stderr"


class CheckpointerLines:
    """Turns raw log lines into the checkpointer's entries, dropping everybody else's."""

    def __init__(self, fmt: str = "stderr", prefix: str = ""):
        self.fmt = fmt
        self.prefix = prefix
        self._pattern, has_pid, has_type = prefix_pattern(prefix)
        self._records = CsvRecords()  # csvlog
        self.why_not: str | None = None
        if fmt == "stderr" and not (has_pid or has_type):
            self.why_not = (f"log_line_prefix {prefix!r} has no %p before %q, so the server log cannot tell "
                            "the checkpointer's lines from a forged RAISE LOG: checkpoint kinds and timings "
                            "come from counters only")
        self._needs_pid = fmt == "stderr" and not has_type

    @property
    def usable(self) -> bool:
        return self.why_not is None

    def needs_pid(self) -> bool:
        """True when only the checkpointer's PID can attribute a line (stderr without %b)."""
        return self._needs_pid

    def entries(self, lines: list[str], pid: int | None) -> list[Entry]:
        if not self.usable:
            return []
        if self.fmt == "jsonlog":
            return [e for ln in lines if (e := self._json(ln, pid)) is not None]
        if self.fmt == "csvlog":
            return self._csv(lines, pid)
        if self._needs_pid and pid is None:
            return []
        out = []
        for ln in lines:
            m = self._pattern.match(ln)
            if m is None:
                continue
            seen_pid = m.groupdict().get("pid")
            if seen_pid is not None and pid is not None and int(seen_pid) != pid:
                continue
            out.append((m.groupdict().get("stamp"), ln[m.end():]))
        return out

    @staticmethod
    def _json(line: str, pid: int | None) -> Entry | None:
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if not isinstance(rec, dict) or rec.get("backend_type") != "checkpointer":
            return None
        if pid is not None and rec.get("pid") != pid:
            return None
        msg = rec.get("message")
        return (rec.get("timestamp"), msg) if isinstance(msg, str) else None

    def _csv(self, lines: list[str], pid: int | None) -> list[Entry]:
        out = []
        for row in self._records.feed(lines):
            if len(row) < 14:
                continue
            btype = row[23] if len(row) > 23 else None  # 13+: backend_type
            if btype is not None and btype != "checkpointer":
                continue
            if pid is not None and row[3] != str(pid):
                continue
            if pid is None and btype is None:
                continue
            out.append((row[0] or None, row[13]))
        return out
