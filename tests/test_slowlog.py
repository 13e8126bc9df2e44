"""Slow statements from the server log (sources/slowlog.py): real captured logs of 13 and 18 in
stderr, csvlog and jsonlog, and a live cluster whose per-tick counts equal the matching lines of
its own log file."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from pgio_tui.metrics import LATENCY_THRESHOLDS_MS, STATEMENTS_LOG_OVER
from pgio_tui.sampler import Sampler
from pgio_tui.sources.slowlog import SlowStatements, complete

LOGS = Path(__file__).parent / "data" / "logs"
# The captured session (scripts/capture-duration-logs.py): statement executions of 122, 231 (extended
# protocol), 310 (text on two lines) and 421 ms; a forged RAISE LOG of 999 ms, pgio-tui's own 150 and
# 160 ms (the marker first, as pgio-tui marked its statements before, and after the first word) and
# auto_explain's 'duration: 420 ms  plan:' are not statements of the workload.
EXPECTED = {100: 4, 200: 3, 300: 2, 400: 1, 500: 0}


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("duration-pg*")))
def test_captured_logs_count_the_statement_executions(name):
    fmt = {"log": "stderr", "csv": "csvlog", "json": "jsonlog"}[name.rsplit(".", 1)[1]]
    lines = (LOGS / name).read_text().splitlines()
    assert SlowStatements(fmt, 0, LATENCY_THRESHOLDS_MS).count(lines) == EXPECTED
    # the same lines read in two ticks, split anywhere (a csv record across the split included)
    for cut in range(1, len(lines), 7):
        s = SlowStatements(fmt, 0, LATENCY_THRESHOLDS_MS)
        a, b = s.count(lines[:cut]), s.count(lines[cut:])
        assert {t: a[t] + b[t] for t in a} == EXPECTED, cut


def test_thresholds_below_log_min_duration_are_unknown_not_short():
    lines = (LOGS / "duration-pg18.log").read_text().splitlines()
    got = SlowStatements("stderr", 250, LATENCY_THRESHOLDS_MS).count(lines)
    assert got == {100: None, 200: None, 300: 2, 400: 1, 500: 0}
    assert complete(250, 250) and not complete(100, 250) and not complete(500, None)


@pytest.mark.matrix
def test_counts_equal_the_matching_lines_of_the_real_log(make_cluster):
    cluster = make_cluster(log_min_duration_statement="100", log_line_prefix="%m [%p] %q%u@%d ")
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    assert sampler.server.slowlog is not None
    counts = {ms: 0 for ms in LATENCY_THRESHOLDS_MS}
    try:
        with cluster.connect(autocommit=True) as work:
            sampler.sample(0, 0.0)
            for tick, sleep in enumerate((0.11, 0.05, 0.26, 0.52, 0.33, 0.21), start=1):
                work.execute(f"SELECT pg_sleep({sleep})")
                frame = sampler.sample(tick, tick * 0.5)
                for ms in counts:
                    counts[ms] += frame.values[STATEMENTS_LOG_OVER[ms]]
            time.sleep(0.3)
            for tick in range(7, 10):  # the collector may write the last lines a little later
                frame = sampler.sample(tick, tick * 0.5)
                for ms in counts:
                    counts[ms] += frame.values[STATEMENTS_LOG_OVER[ms]]
    finally:
        sampler.close()
    found = [float(m[1]) for m in re.finditer(r"LOG:  duration: ([\d.]+) ms  statement: SELECT pg_sleep",
                                               cluster.log_text())]
    assert len(found) == 5  # 0.05 s is under log_min_duration_statement
    assert counts == {ms: sum(1 for d in found if d > ms) for ms in LATENCY_THRESHOLDS_MS}
