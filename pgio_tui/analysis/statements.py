"""Per-run statement rows for diff and report: calls, mean and stddev of the top statements.

From the recording's statement windows inside the summary window (Recording.statement_totals):
a statement's figures add up the windows in which it was among the top 20, which for the busy
statements a diff is about is all of them. Statements are matched between runs by their text
(queryids differ between servers), else by queryid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pgio_tui.safe_text import printable

if TYPE_CHECKING:
    from pgio_tui.analysis.align import Window
    from pgio_tui.store.reader import Recording  # annotations only: sqlite-utils stays unloaded

TOP_STATEMENTS = 10  # statements per run in a summary, by total time
NAME_WIDTH = 60


def one_line(text: str | None, limit: int | None = None) -> str:
    """Server text on one line: runs of white space (newlines, tabs) one space, any other control
    character a visible escape (safe_text.printable); cut to `limit` characters with an ellipsis."""
    out = printable(" ".join((text or "").split()))
    return out if limit is None or len(out) <= limit else out[: max(0, limit - 1)] + "…"


def statement_rows(rec: Recording, win: Window,
                   top: int = TOP_STATEMENTS) -> list[tuple[str, str, str, str, float | None]]:
    """(statement, label, figure, unit, value) for the run's top statements by total time. The
    statement (its whole text on one line; the queryid where the text is unknown) pairs it between
    runs, as queryids differ between servers; the label (that text cut) is for display."""
    if win.start_tick is None:
        return []
    totals = rec.statement_totals(win.start_tick, win.end_tick)
    texts = rec.statement_texts()
    ranked = sorted(totals.items(), key=lambda kv: -kv[1]["total_ms"])[:top]
    out, seen = [], set()
    for queryid, t in ranked:
        label = one_line(texts.get(queryid), NAME_WIDTH) or f"queryid {queryid}"
        key = one_line(texts.get(queryid)) or f"queryid {queryid}"
        key = key if key not in seen else f"{key} (queryid {queryid})"  # one text, two trees (search_path)
        seen.add(key)
        out += [(key, label, "calls", "count", float(t["calls"])), (key, label, "mean", "ms", t["mean_ms"]),
                (key, label, "stddev", "ms", t["stddev_ms"])]
    return out
