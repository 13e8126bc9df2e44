"""Long set-up steps as a progress bar, not raw lines: one line redrawn in place on a terminal, a
plain line per tenth in a log; pgbench -i's own progress lines (real ones, from a real pgbench) are
drawn, not printed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgio_tui.experiments import workloads
from pgio_tui.headless import SetupBar

ROOT = Path(__file__).resolve().parents[1]


class Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_a_log_gets_a_line_per_tenth_and_a_terminal_one_line_redrawn():
    log, tty = Stream(False), Stream(True)
    for stream in (log, tty):
        bar = SetupBar("pgbench -i -s 100", stream=stream)
        for i in range(0, 101):
            bar.update(i / 100)
        bar.done()
    lines = log.getvalue().splitlines()
    assert [x.split(": ")[1].split(" (")[0] for x in lines] == [f"{p} %" for p in range(0, 101, 10)]
    text = tty.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n") and text.count("\r\x1b[2K") == 102
    assert text.rstrip("\n").rsplit("\r\x1b[2K", 1)[1].startswith("pgbench -i -s 100 [####################] 100% ")


def test_a_failed_step_is_not_shown_as_complete():
    log = Stream(False)
    bar = SetupBar("pgio tables", stream=log)
    bar.update(0.42)
    bar.done(complete=False)
    assert log.getvalue().splitlines()[-1].startswith("pgio tables: 40 % (")


def test_an_experiments_pgbench_init_reports_its_progress(make_cluster):
    cluster = make_cluster()
    seen = []
    workloads.setup({"kind": "pgbench", "args": ["-T", "1"], "init_scale": 3}, cluster.conninfo(),
                    progress=lambda label, fraction: seen.append((label, fraction)))
    fractions = [f for _, f in seen[:-1]]
    assert {label for label, _ in seen} == {"pgbench -i -s 3"} and seen[-1][1] is None
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 3
    with cluster.connect() as conn:
        assert conn.execute("select count(*) from pgbench_accounts").fetchone()[0] == 300_000


@pytest.mark.slow
def test_bench_lab_in_a_log_draws_the_init_as_tenths(pg_bindir, tmp_path):
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "bench", "pgbench", "--lab", "--headless", "--init-scale",
                        "3", "--", "-T", "1"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "PGIO_PG_BINDIR": str(pg_bindir)})
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "pgbench -i -s 3: 100 % (" in out and "pgio-tui: bench: lab cluster: 100 % (" in out
    assert "tuples (" not in out  # pgbench's own progress lines are drawn, not printed
