"""Issue 11, item 11: a device that holds both PGDATA and pg_wal is shown once with both roles; the
diff's Summary and Charts tabs count the same checkpoints; a statistic without a verdict says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_diff_fixtures import RUNS, T0, TAIL, WORK, _frame, write_run

from pgio_tui.analysis import report
from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.formats import render
from pgio_tui.frame import Event, Frame
from pgio_tui.store.writer import Recorder
from pgio_tui.tui.widgets.diff_overlay_pane import checkpoint_count_text


def write_shared(path: Path) -> Path:
    """Run A with pg_wal on PGDATA's device, and a checkpoint that began before the workload."""
    run = {**RUNS["A"], "wal": RUNS["A"]["data"]}
    dev, lead = run["data"], run["lead"]
    with Recorder(path, force=True, meta={"host": "lab-a", "interval_s": 1.0}) as rec:
        wid = rec.workload_start("pgbench", ["pgbench", "-T", str(WORK)], t=T0 + lead)
        for tick in range(lead + WORK + TAIL):
            f: Frame = _frame(run, tick)
            f.device_roles = {dev: "data,wal"}
            if tick == lead + 3:
                f.checkpoints.append({"start_t": T0 + lead - 3, "end_t": T0 + tick, "kind": "requested",
                                      "buffers": 10, "source": "log"})
            rec.write(f)
        rec.workload_stop(wid, 0, None, t=T0 + lead + WORK - 1)
    return path


def test_shared_device_once_with_both_roles(tmp_path):
    a = write_shared(tmp_path / "a.pgio")
    b = write_run(tmp_path / "b.pgio", "B")
    c = compare(a, b)
    names = [r.name for r in c.rows if r.group == "devices"]
    assert names.count("PGDATA+WAL util mean") == 1
    assert all(r.a is None for r in c.rows if r.group == "devices" and not r.name.startswith("PGDATA+WAL"))
    md = render(c, "markdown")
    assert "PGDATA+WAL nvme0n1" in md and "PGDATA nvme0n1, WAL nvme0n1" not in md
    html = report.build([a])
    assert html.count("<title>PGDATA+WAL w_await</title>") == 1  # one line, not two identical ones
    assert "<title>WAL w_await</title>" not in html and "<title>PGDATA w_await</title>" not in html


def test_checkpoint_counts_agree(tmp_path):
    a = write_shared(tmp_path / "a.pgio")
    b = write_run(tmp_path / "b.pgio", "B")
    c = compare(a, b, "workload")
    s = c.a
    assert len(s.checkpoint_spans) == 2  # the chart shades the one begun before the window too
    assert s.value("checkpoints", "count") == 1
    text = checkpoint_count_text(s)
    assert text.startswith("1 in the window (time 1)") and "+ 1 overlapping its edges" in text


def test_no_verdict_says_why(tmp_path):
    a = write_run(tmp_path / "a.pgio", "A")
    b = write_run(tmp_path / "b.pgio", "B")
    c = compare(a, b, "workload")
    unjudged = [r for r in c.rows if r.judgement.why]
    assert unjudged, "a 29-tick run has statistics too slow-moving for 8 blocks"
    for r in unjudged:
        assert r.verdict == "" and "too few independent blocks" in r.judgement.why
    md = render(c, "markdown")
    assert "| – | ?AB |" in md and "too few independent blocks in that run to judge (under 8)" in md  # code, legend
    assert "no verdict" not in md and "no verdict: too few" in render(c, "json")  # the whole reason in JSON


def _run(path: Path, work: int, summary: dict) -> Path:
    """A pgbench run of `work` ticks between 3 idle ones on each side, its run starting after init."""
    with Recorder(path, force=True, meta={"interval_s": 1.0}) as rec:
        wid = rec.workload_start("pgbench", ["pgbench", "-t", "1"], {"user_args": ["-t", "1"]}, t=T0)
        for tick in range(work + 6):
            f = Frame(tick=tick, t=T0 + tick, elapsed=tick, dt=None if tick == 0 else 1.0)
            if tick:
                f.values = {"latency.tps": 10.0 if 3 <= tick < 3 + work else 0.0}
            if tick == 1:  # `pgbench -i` runs first: the workload starts, its run does not
                f.events.append(Event("workload_start", "pgbench started"))
            if tick == 3 + work - 1:
                f.events.append(Event("workload_stop", "pgbench ended"))
            rec.write(f)
        rec.workload_stop(wid, summary.pop("exit_code", 0), {"run_start_t": T0 + 2.5, **summary},
                          t=T0 + 3 + work - 1)
    return path


def test_each_workload_window_is_its_own_run(tmp_path):
    """Item 9: aligned on the workload (the default when both have one), the slower run is not cut to
    the faster one's length, `pgbench -i` is not in the window, and an early end is said."""
    a = _run(tmp_path / "a.pgio", 4, {})
    b = _run(tmp_path / "b.pgio", 12, {"exit_code": 130, "interrupted": True})
    c = compare(a, b)
    wa, wb = c.windows
    assert c.align == "workload" and wa.origin_t == wb.origin_t == T0 + 2.5
    assert wa.length == pytest.approx(3.5) and wb.length == pytest.approx(11.5)  # not cut to A's
    assert wa.whole_workload and wb.whole_workload
    assert any(n.startswith("B: workload ended early (exit 130") for n in c.notes)
