"""Slow statements of any workload, counted from the server log's `duration:` lines.

With log_min_duration_statement = D (ms, >= 0) the server logs every statement that ran at least
D ms: `LOG:  duration: 312.507 ms  statement: UPDATE ...` (simple protocol), `... execute <name>:
...` (extended protocol), or a bare `duration: 312.507 ms` when log_statement already logged the
text. So for a threshold T >= D, the lines over T ms are exactly the statements over T ms; for
T < D the log misses some, and that count is unknown (None), never a short count.

What is not a statement's own duration is left out: the parse and bind phases of the extended
protocol (lines of their own), auto_explain's `duration: ... plan:`, a RAISE LOG that only looks
like one (PL/pgSQL adds a CONTEXT to its message: csvlog/jsonlog have the field, stderr a
`CONTEXT:` line right after), and pgio-tui's own statements. Textual-free; no I/O here.
"""

from __future__ import annotations

import json
import re

from pgio_tui.sources.csvlog import CsvRecords
from pgio_tui.sources.pgfeatures import is_own

# "duration: 312.507 ms" and what follows it on the message's first line.
_DURATION = re.compile(r"^duration: (?P<ms>\d+(?:\.\d+)?) ms(?:  (?P<rest>.*))?$")
_WHAT = re.compile(r"^(?:statement: |execute [^:]*: )")  # a statement's execution (else: parse, bind, plan)
_STDERR = re.compile(r"(?:^|\s)LOG:  (?P<msg>duration: .*)$")
_CONTEXT = re.compile(r"(?:^|\s)CONTEXT:  ")


def statement_ms(message: str) -> float | None:
    """The duration of a statement's execution from one log message, else None."""
    m = _DURATION.match(message.split("\n", 1)[0])
    if m is None:
        return None
    rest = m["rest"]
    if rest is not None:
        if not _WHAT.match(rest):
            return None
        if is_own(rest.split(": ", 1)[1]):
            return None  # the observer, not the workload
    return float(m["ms"])


def complete(threshold_ms: float, min_duration_ms: float | None) -> bool:
    """Does the log hold every statement slower than `threshold_ms`?"""
    return min_duration_ms is not None and 0 <= min_duration_ms <= threshold_ms


class SlowStatements:
    """Counts, per tick, the statements over each threshold in the log lines read that tick."""

    def __init__(self, fmt: str, min_duration_ms: float | None, thresholds: tuple[int, ...]):
        self.fmt = fmt  # stderr | csvlog | jsonlog (serverlog.log_format)
        self.min_duration_ms = min_duration_ms
        self.thresholds = thresholds
        self._records = CsvRecords()  # csvlog

    def count(self, lines: list[str]) -> dict[int, int | None]:
        """threshold -> statements over it in these lines; None where the log cannot tell."""
        durations = self.durations(lines)
        return {t: sum(1 for d in durations if d > t) if complete(t, self.min_duration_ms) else None
                for t in self.thresholds}

    def durations(self, lines: list[str]) -> list[float]:
        if self.fmt == "jsonlog":
            return [d for ln in lines if (d := self._json(ln)) is not None]
        if self.fmt == "csvlog":
            return self._csv(lines)
        return self._stderr(lines)

    @staticmethod
    def _stderr(lines: list[str]) -> list[float]:
        out, held = [], None  # held: a duration whose next line may say it was a RAISE (CONTEXT)
        for ln in lines:
            if ln.startswith(("\t", " ")):  # a continuation line: inside a message, never a message
                continue
            if held is not None and not _CONTEXT.search(ln):
                out.append(held)
            m = _STDERR.search(ln)
            held = statement_ms(m["msg"]) if m is not None else None
        if held is not None:  # a message and its CONTEXT are written at once: none follows
            out.append(held)
        return out

    @staticmethod
    def _json(line: str) -> float | None:
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if not isinstance(rec, dict) or rec.get("error_severity") != "LOG" or rec.get("context"):
            return None
        msg = rec.get("message")
        return statement_ms(msg) if isinstance(msg, str) else None

    def _csv(self, lines: list[str]) -> list[float]:
        out = []
        for row in self._records.feed(lines):
            # 11 error_severity, 13 message, 18 context (csvlog's columns, 13-18)
            if len(row) > 18 and row[11] == "LOG" and not row[18]:
                d = statement_ms(row[13])
                if d is not None:
                    out.append(d)
        return out
