"""Findings as people read them: printed lines (`findings`, `diff`, `experiment report`) and the
HTML section at the top of a report. The findings themselves are analysis/findings.py's."""

from __future__ import annotations

import textwrap

import json
from typing import Any

from pgio_tui.analysis.align import AlignError, window
from pgio_tui.analysis.findings import Finding, findings_of, shown
from pgio_tui.safe_text import html_text as escape
from pgio_tui.safe_text import markdown_cell, printable
from pgio_tui.store.moments import KINDS, Moment

NONE = "no findings: nothing in this recording crossed a rule's threshold"
WINDOWS_SHOWN = 8



WIDTH = 120  # a finding's text lines in the text formats (diff --format table, experiment report)

def evidence(f: Finding) -> str:
    return ", ".join(f"{k} {shown(v['value'], v['unit'])} {v['unit']}".rstrip()
                     for k, v in f.figures.items() if v["value"] is not None)


def windows(f: Finding) -> str:
    more = len(f.windows) - WINDOWS_SHOWN
    shown_ = ", ".join(f"{a:.0f}-{b:.0f} s" for a, b in f.windows[:WINDOWS_SHOWN])
    return shown_ + (f" (+{more} more)" if more > 0 else "")


def text_lines(found: list[Finding]) -> list[str]:
    """Each finding as printed: `[strength] id: text`, its evidence and its suggestion indented."""
    out = []
    for f in found:
        out.append(f"[{f.strength}] {f.id}: {f.text}")
        out.append(f"    evidence: {evidence(f)}")
        if f.windows:
            out.append(f"    windows: {windows(f)}")
        if f.suggestion:
            out.append(f"    suggestion: {f.suggestion}")
    return out


def html_section(per_run: list[tuple[str, list[Finding]]]) -> str:
    """`<h2>Findings</h2>` and each run's findings (its label first when there are several)."""
    parts = ["<h2>Findings</h2><p class=muted>What the recording shows, each with the figures it rests on "
             "(docs/findings.md: the rules and their thresholds). A finding reads the figures; it is not a "
             "proof of cause.</p>"]
    for label, found in per_run:
        if len(per_run) > 1:
            parts.append(f"<h3>{escape(label)}</h3>")
        if not found:
            parts.append(f"<p>{escape(NONE)}</p>")
            continue
        items = []
        for f in found:
            items.append(f"<li><b>{escape(f.id)}</b> <i>({escape(f.strength)})</i>: {escape(f.text)}"
                         f"<br><small>evidence: {escape(evidence(f))}"
                         + (f"<br>windows (s from the start of the axis): {escape(windows(f))}" if f.windows else "")
                         + (f"<br>suggestion: {escape(f.suggestion)}" if f.suggestion else "") + "</small></li>")
        parts.append("<ul class=findings>" + "".join(items) + "</ul>")
    return "".join(parts)


class ComparisonFindings:
    """The findings of each run of a comparison (over the window it was compared on), and which
    findings a run has that the baseline has not, or lacks that it has."""

    def __init__(self, letters: list[str], labels: list[str], found: list[list[Finding]]):
        self.letters, self.labels, self.found = letters, labels, found

    def differences(self) -> list[str]:
        base = {f.id for f in self.found[0]}
        out = []
        for letter, found in zip(self.letters[1:], self.found[1:]):
            ids = {f.id for f in found}
            gained, lost = sorted(ids - base), sorted(base - ids)
            if gained or lost:
                said = ([f"also {', '.join(gained)}"] if gained else []) + (
                    [f"no longer {', '.join(lost)}"] if lost else [])
                out.append(f"{letter} against {self.letters[0]}: " + "; ".join(said))
        return out

    def lines(self) -> list[str]:
        out = []
        for letter, label, found in zip(self.letters, self.labels, self.found):
            out.append(f"{letter} ({printable(label)}):")
            for x in text_lines(found) or [NONE]:  # wrapped: a finding is a sentence, a table row is not
                out += textwrap.wrap(printable(x), WIDTH, initial_indent="  ", subsequent_indent="    ")
        return out

    def text(self) -> str:
        diff = self.differences()
        return "\n".join(["findings:", *self.lines()] + (["findings that differ:", *(f"  {d}" for d in diff)]
                                                         if diff else [])) + "\n"

    def to_list(self) -> list[dict[str, Any]]:
        return [{"run": letter, "label": label, "findings": [f.to_dict() for f in found]}
                for letter, label, found in zip(self.letters, self.labels, self.found)]

    def added_to(self, printed: str, fmt: str) -> str:
        """The comparison as `fmt` with the findings: after the table (table, markdown), a `findings`
        key (json); a csv stays the one table it is."""
        if fmt == "json":
            doc = json.loads(printed)
            doc["findings"] = self.to_list()
            doc["findings_that_differ"] = self.differences()
            return json.dumps(doc, indent=2, allow_nan=False) + "\n"
        if fmt == "markdown":
            items = [f"- **{letter}** {markdown_cell(f'{f.id} ({f.strength}): {f.text}')}"
                     for letter, found in zip(self.letters, self.found) for f in found]
            diff = [f"- {markdown_cell(d)}" for d in self.differences()]
            return printed + "\n## findings\n\n" + "\n".join(items or [f"- {NONE}"]) + "\n" + (
                "\n**differ**\n\n" + "\n".join(diff) + "\n" if diff else "")
        if fmt == "table":
            return printed + "\n" + self.text()
        return printed


def comparison_findings(c) -> ComparisonFindings:
    """Each compared run's findings over its window (its file reopened: a comparison keeps none open)."""
    from pgio_tui.analysis.findings import findings_of_file
    return ComparisonFindings(c.letters, c.labels, [findings_of_file(s.path, win=s.window) for s in c.summaries])


MOMENTS_PER_FINDING = 20  # replay's n/N: the first windows of a finding (a WAL checkpoint every 2 s has hundreds)


def finding_moments(rec) -> list[Moment]:
    """Replay's moments for the findings of an open Recording: the start of each finding's windows
    (over the window `diff` and `report` use), so n/N and the scrubber's marks jump to them."""
    try:
        win = window(rec, "auto")
    except AlignError:
        return []
    out = []
    for f in findings_of(rec, win):
        for a, _ in f.windows[:MOMENTS_PER_FINDING]:
            t = win.origin_t + a
            tick = max(rec.tick_at(t + 0.0005), win.start_tick)  # the window's first tick at the earliest
            out.append(Moment(tick, t, "finding", f"{f.id}: {f.text}"))
    return out


def with_findings(moments: list[Moment], rec) -> list[Moment]:
    """`moments` and the findings' moments, in tick order as find_moments sorts them."""
    return sorted(moments + finding_moments(rec), key=lambda m: (m.tick, KINDS.index(m.kind)))
