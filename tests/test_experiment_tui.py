"""`experiment run --tui`: the live monitor with the experiment strip, in a real terminal (tmux, a
private server), on a throwaway cluster; and the strip's lines at 80 columns.

In tmux: the strip shows run i of N with the run's settings and an ETA while the panes show the
run; q during the second run stops it (kept, marked interrupted), the settings are put back, the
finished run is kept, the results table of the finished runs is printed and the exit code is 130;
`resume` then completes it headless.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgio_tui import cli
from pgio_tui.experiments.progress import Snapshot
from pgio_tui.tui.widgets.experiment_strip import lines

ROOT = Path(__file__).resolve().parents[1]


def text(line) -> str:
    return "".join(t for t, _ in line)


def test_strip_lines_fit_80_columns():
    snap = Snapshot(index=3, total=6, done=2, label="backend_flush_after=512kB r1", phase="run", elapsed_s=12,
                    expected_s=30, eta_s=130, flags=1)
    first, second = lines(snap, "run 2/6 done: backend_flush_after=0 r1 · 0:31 · tps 1,234", None, 80)
    assert text(first).startswith(" experiment  ████")
    assert text(first) == " experiment  ████░░░░░░░░ run 3/6 · ETA 2:10 · 1 flag · 0:12 of 0:30"
    assert text(second) == " this run: backend_flush_after=512kB r1 │ last: run 2/6 done"  # the rest is dropped
    _, wide = lines(snap, "run 2/6 done: backend_flush_after=0 r1 · 0:31 · tps 1,234", None, 200)
    assert text(wide) == " this run: backend_flush_after=512kB r1 │ last: run 2/6 done backend_flush_after=0 r1 · 0:31 · tps 1,234"
    assert len(text(first)) <= 80 and len(text(second)) <= 80
    first, _ = lines(snap, "", "finished: 6 of 6 runs ended", 80)
    assert "finished: 6 of 6 runs ended" in text(first) and "q: quit and print the results table" in text(first)
    first, second = lines(snap, "\x1b[31mhostile\x07", None, 40)  # recorded text stays text
    assert "\x1b" not in text(second) and "\x07" not in text(second) and len(text(first)) <= 40


def _capture(tmux) -> str:
    return subprocess.run([*tmux, "capture-pane", "-p", "-t", "exp"], capture_output=True, text=True).stdout


def _wait_for(tmux, predicate, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _capture(tmux)
        if predicate(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"screen never matched; last capture:\n{screen}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tui_shows_the_run_and_q_stops_restores_and_keeps(make_cluster, tmp_path, capsys):
    cluster = make_cluster()
    conn = f"-h {cluster.sockdir} -p {cluster.port} -U postgres -d postgres"
    out, log, rc_file = tmp_path / "exp", tmp_path / "stdout", tmp_path / "rc"
    tmux = ["tmux", "-L", f"pgio-exp-test-{os.getpid()}"]
    env = f"-u COLUMNS -u LINES XDG_CONFIG_HOME={tmp_path / 'config'} TEXTUAL_THEME= PYTHONPATH={ROOT} "
    cmd = (f"cd {tmp_path} && env {env}timeout --foreground 120 {sys.executable} -m pgio_tui experiment run {conn} "
           f"--allow-settings --init-scale 1 --no-discard-first --set bgwriter_delay=100ms,300ms --repeat 1 "
           f"-o {out} --tui pgbench -- -c 2 -T 6 > {log}; echo $? > {rc_file}")
    subprocess.run([*tmux, "new-session", "-d", "-s", "exp", "-x", "120", "-y", "40", cmd], check=True)
    try:
        screen = _wait_for(tmux, lambda s: "this run: bgwriter_delay=300ms r1" in s, 90)
        assert " experiment " in screen and "run 2/2 · ETA" in screen and "1 Checkpoint" in screen
        assert "last: run 1/2 done" in screen  # the last finished run (its settings too when they fit)
        with cluster.connect() as c:
            assert c.execute("select current_setting('bgwriter_delay')").fetchone()[0] == "300ms"
        subprocess.run([*tmux, "send-keys", "-t", "exp", "q"], check=True)
        deadline = time.monotonic() + 60
        while not rc_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert rc_file.read_text().strip() == "130"
    plan = json.loads((out / "experiment.json").read_text())
    assert [r["state"] for r in plan["runs"]] == ["done", "interrupted"] and plan["restored"] is True
    with cluster.connect() as c:
        assert c.execute("select current_setting('bgwriter_delay')").fetchone()[0] == "200ms"  # the default again
    printed = log.read_text()
    assert printed.lstrip().startswith("figure") and "bgwriter_delay=100ms" in printed  # the finished run's table
    args = ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]
    assert cli.main(["experiment", "resume", str(out), *args, "--allow-settings", "--quiet"]) == 0
    plan = json.loads((out / "experiment.json").read_text())
    assert [r["state"] for r in plan["runs"]] == ["done", "done"] and plan["restored"] is True


def strip_app(path):
    """The monitor on the fixture recording with the strip of an experiment in its third run (a
    fixed clock: 12 s into it, runs of 30 s nominal); the experiment's thread only waits."""
    import threading

    from pgio_tui.experiments.plan import Plan
    from pgio_tui.experiments.progress import Progress
    from pgio_tui.store.reader import Recording
    from pgio_tui.tui.experiment import ExperimentApp, ExperimentFeed
    from pgio_tui.tui.session import session_from_recording

    plan = Plan(sweep={"backend_flush_after": ["0", "512kB", "2MB"]}, repeat=2, order="interleaved",
                workload={"kind": "pgbench", "args": ["-c", "8", "-T", "30"]}, target={"lab": True})
    plan.make_runs()
    now = [1000.0]
    progress = Progress(plan, "/nonexistent", clock_fn=lambda: now[0])
    plan.runs[0].state = plan.runs[1].state = "done"
    plan.runs[1].flags = [{"kind": "autovacuum", "text": "autovacuum ran on pgbench_accounts"}]
    progress.reported = {1, 2}
    plan.runs[2].state = "running"
    progress.begin("run")
    progress.first_start = 1000.0 - 80  # two runs of 40 s each before this one
    progress.done_before = 0
    now[0] = 1012.0
    stop = threading.Event()
    feed = ExperimentFeed(lambda f: stop.wait(30), progress)
    feed.last = "run 2/6 done: backend_flush_after=512kB r1 · 0:31 · tps 1,234 · latency mean 6.48 ms"
    feed.stop = stop.set  # quitting the snapshot's app ends the waiting thread
    with Recording(path) as rec:
        frames = list(rec.frames(None))
        app = ExperimentApp(session_from_recording(rec), feed=feed, frames=frames, theme="pgio-dark", mode="replay")
    return app


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_strip_snapshot(snap_compare, fixture_file, size):
    assert snap_compare(strip_app(fixture_file), terminal_size=size)
