"""What the experiment's progress shows (experiments/progress.py), on a plan the test moves along
by hand with a fake clock: run i of N, the phase, elapsed of expected, the ETA (nominal before a
run has finished, measured after), flags so far, and one line per finished run, once."""

from __future__ import annotations

import pytest

from pgio_tui.headless import bar
from pgio_tui.experiments.plan import Plan
from pgio_tui.experiments.progress import Progress, nominal_s


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def plan(args=("-c", "2", "-T", "30"), warmup=0.0) -> Plan:
    p = Plan(sweep={"backend_flush_after": ["0", "2MB"]}, repeat=2, order="interleaved",
             workload={"kind": "pgbench", "args": list(args), "init_scale": 1}, target={"lab": True},
             warmup_s=warmup)
    p.make_runs()
    return p


@pytest.mark.parametrize("args,seconds", [(("-T", "30"), 30.0), (("-T30",), 30.0), (("--time=45", "-c", "2"), 45.0),
                                          (("-t", "1000"), None), (("-T", "x"), None)])
def test_the_workload_says_its_length(args, seconds):
    assert nominal_s(plan(args)) == seconds
    assert nominal_s(Plan(sweep={}, repeat=1, order="interleaved", workload={"kind": "pgio", "config": {"run_time": 60}},
                          target={})) == 60


def test_eta_nominal_then_measured(tmp_path):
    p, clock = plan(warmup=5), Clock()
    prog = Progress(p, tmp_path, clock_fn=clock)
    snap = prog.snapshot()
    assert (snap.index, snap.total, snap.done, snap.eta_s) == (0, 4, 0, 4 * 35)  # 4 runs × (30 s + 5 s warm-up)
    p.runs[0].state = "running"
    prog.begin("run")
    clock.t += 12
    snap = prog.snapshot()
    assert (snap.index, snap.label, snap.phase, snap.elapsed_s, snap.expected_s) == (
        1, "backend_flush_after=0 r1", "run", 12, 30)
    assert snap.eta_s == 4 * 35 - 12
    assert snap.text() == "run 1/4 · backend_flush_after=0 r1 · 0:12 of 0:30 · ETA 2:08 · no flags"
    assert snap.fraction == pytest.approx(12 / 30 / 4)
    clock.t += 28  # the run took 40 s of wall time with its hygiene
    p.runs[0].state = "done"
    prog.end()
    p.runs[1].state = "running"
    prog.begin("run")
    clock.t += 10
    snap = prog.snapshot()
    assert snap.done == 1 and snap.eta_s == 3 * 40 - 10  # measured: 40 s per run, 3 to go, 10 s into this one
    p.runs[0].flags = [{"kind": "autovacuum", "text": "autovacuum ran on pgbench_accounts"}]
    p.runs[1].state = "failed"
    p.runs[1].note = "pgbench exited with 1"
    assert prog.finished() == ["run 1/4 done: backend_flush_after=0 r1",  # no recording to read figures from
                               "  flag: autovacuum ran on pgbench_accounts",
                               "run 2/4 failed: backend_flush_after=2MB r1 · pgbench exited with 1"]
    assert prog.snapshot().flags == 1 and prog.snapshot().text().endswith("· 1 flag")
    assert prog.finished() == []  # each run once


def test_resume_counts_the_runs_done_before(tmp_path):
    p, clock = plan(), Clock()
    p.runs[0].state = p.runs[1].state = "done"
    prog = Progress(p, tmp_path, clock_fn=clock)
    assert prog.finished() == []  # done in an earlier session: not reported again
    p.runs[2].state = "running"
    prog.begin("run")
    assert prog.snapshot().text().startswith("run 3/4 · backend_flush_after=0 r2")
    assert prog.snapshot().eta_s == 2 * 30


def test_bar():
    assert bar(0) == "[--------------------]   0%"
    assert bar(0.5) == "[##########----------]  50%"
    assert bar(0.999) == "[###################-]  99%"  # never 100 % before the end
    assert bar(1) == "[####################] 100%"


def test_progress_line_drops_whole_fields_never_digits(tmp_path):
    """Issue 22 item 7: at 120 columns the line was cut inside tps' figure (`tps 64` for 643)."""
    from pgio_tui import metrics as M
    from pgio_tui.commands.experiment_progress import ProgressBar
    from pgio_tui.frame import Frame
    p = Plan(sweep={"checkpoint_completion_target": ["0.9"], "max_wal_size": ["64MB"], "shared_buffers": ["32MB"]},
             repeat=2, order="interleaved", workload={"kind": "pgbench", "args": ["-T", "20"], "init_scale": 1},
             target={"lab": True})
    p.make_runs()
    clock = Clock()
    prog = Progress(p, tmp_path, clock_fn=clock)
    p.runs[0].state = "running"
    prog.begin("run")
    clock.t += 12
    frame = Frame(tick=12, t=0.0, elapsed=12.0, dt=1.0)
    frame.values[M.LATENCY_TPS], frame.values[M.MEM_DIRTY_KB] = 643.2, 81234.0
    line_bar = ProgressBar(prog)
    full = line_bar.line(frame)
    fields = full.split(" · ")
    cut = full.index("tps 643") + len("tps 64")  # where the old line (text[:width]) cut into 643
    assert "tps 643" in fields and "tps 64" not in line_bar.line(frame, cut).split(" · ")
    for width in range(len(fields[0]), len(full) + 2):
        line = line_bar.line(frame, width)
        assert len(line) <= width
        shown = line.split(" · ")
        assert shown[0] == fields[0]  # the bar and the run come first
        assert all(f in fields for f in shown), (width, line)  # whole fields only
    assert line_bar.line(frame, cut).split(" · ")[-1] == "no flags"  # tps left out whole
