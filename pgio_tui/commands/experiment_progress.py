"""The headless face of a running experiment: a progress bar on stderr, redrawn in place, only on
a terminal (a log gets plain lines instead: one when a run starts, one when it ends, none per
tick), and one line per finished run. The state it shows is experiments/progress.py's."""

from __future__ import annotations

import os
import sys

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.experiments.progress import Progress
from pgio_tui.format import fit_fields
from pgio_tui.frame import Frame
from pgio_tui.headless import StatusLine, bar

class ProgressBar(StatusLine):
    """A StatusLine (headless.run_headless draws it every tick) that shows the experiment's
    progress and, after it, the tick's tps and Dirty."""

    def __init__(self, progress: Progress, enabled: bool = True):
        super().__init__(enabled=enabled)
        self.progress = progress

    def line(self, frame: Frame | None = None, width: int = 10**6) -> str:
        """The bar and the progress fields, then the tick's tps and Dirty, within `width`
        columns: fields that do not fit are left out whole (format.fit_fields)."""
        snap = self.progress.snapshot()
        head, *rest = snap.fields()
        fields = [f"{bar(snap.fraction)} {head}", *rest]
        if frame is not None:
            tps, dirty = frame.number(M.LATENCY_TPS), frame.number(M.MEM_DIRTY_KB)
            fields.append(f"tps {'-' if tps is None else f'{tps:.0f}'}")
            fields.append(f"dirty {fmt.kib(dirty)}")
        return fit_fields(fields, width)

    def show(self, frame: Frame, path: str) -> None:
        if not (self.enabled and self.tty):
            return  # in a log, the lines per run say it
        try:
            sys.stderr.write("\r\x1b[2K" + self.line(frame, os.get_terminal_size(2).columns - 1))
            sys.stderr.flush()
        except OSError:
            self.enabled = False

    show_status = show

    def clear(self) -> None:
        """Wipe the bar before a line is printed under it."""
        if self.enabled and self.tty:
            try:
                sys.stderr.write("\r\x1b[2K")
                sys.stderr.flush()
            except OSError:
                self.enabled = False

    def done(self) -> None:
        self.clear()


class Reporter:
    """What `experiment run/resume` prints while the runner works: its messages and one line per
    finished run on stderr (the bar wiped first), the bar during each Session, the results table
    on stdout at the end."""

    def __init__(self, progress: Progress, quiet: bool = False):
        self.progress = progress
        self.bar = ProgressBar(progress, enabled=not quiet)
        self.out = None  # where the lines go instead of stderr (the TUI's notifications)
        self.lines_out = None  # where the finished runs' lines go instead (the TUI's strip)

    def say(self, text: str) -> None:
        self.flush()
        self._say(text)

    def _say(self, text: str) -> None:
        from pgio_tui.errors import PROG, say
        if self.out is not None:
            self.out(text)
            return
        self.bar.clear()
        say(f"{PROG}: experiment: {text}")

    def flush(self) -> None:
        """The lines of runs that ended since the last call."""
        for line in self.progress.finished():
            if self.lines_out is not None:
                self.lines_out(line)
            else:
                self._say(line)

    def wrap(self, run_one):
        """run_one(kind, path) with the progress told when each Session starts and ends."""
        def one(kind, path):
            self.flush()
            self.progress.begin(kind)
            try:
                return run_one(kind, path)
            finally:
                self.progress.end()
        return one

    def results_table(self) -> None:
        """The experiment report's table of the finished runs, on stdout (nothing before one)."""
        from pgio_tui.experiments import results
        from pgio_tui.experiments.plan import PlanError
        from pgio_tui.experiments.report import render
        self.flush()
        plan = self.progress.plan
        if not any(r.state == "done" for r in plan.runs):
            return
        try:
            res = results.collect(plan, self.progress.folder, results.parse_baseline(None, plan))
            text = render(res, "table")
        except PlanError as exc:
            self._say(f"no results table: {exc}")
            return
        try:
            sys.stdout.write("\n" + text)
            sys.stdout.flush()
        except OSError:
            pass
