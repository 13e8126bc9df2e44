"""Truth: the log-kind statement counts against the server log's `duration:` lines counted here.

With log_min_duration_statement = 0, statements of known length (pg_sleep of 50 to 650 ms, by
the simple and the extended protocol) run between ticks; the sampler counts, tick by tick, the
statements over each threshold from the log it reads. The reference is the log file read here
with its own pattern (a statement's or an execute's `duration:` line, pgio-tui's own left out), over
the same lines: those written after the sampler's first tick and before its last.

Tolerance: exact (the same lines, counted). The run is checked to have lines on both sides of every
threshold, so no count passes by being 0 on both sides.
"""

from __future__ import annotations

import re
import time

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

# metric -> reference kind (metrics.REFERENCE_KINDS): the server log's duration: lines
CHECKS = dict.fromkeys(M.STATEMENTS_LOG_OVER.values(), "log")
SLEEPS_MS = (50, 150, 250, 350, 450, 650, 120, 520)
_LINE = re.compile(r" LOG:  duration: (\d+\.\d+) ms  (?:statement|execute [^:]*): (.*)$")


def _durations(text: str) -> list[float]:
    return [float(m[1]) for m in map(_LINE.search, text.splitlines()) if m and "pgio-tui" not in m[2]]


@pytest.mark.matrix
def test_slow_statement_counts_equal_the_logs_lines(make_cluster, capsys):
    cluster = make_cluster(log_min_duration_statement="0")
    work = cluster.connect(autocommit=True)
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    log = cluster.server_log_path()
    sums = dict.fromkeys(M.LATENCY_THRESHOLDS_MS, 0)
    try:
        sampler.sample(0, 0.0)
        start = log.stat().st_size
        for k, ms in enumerate(SLEEPS_MS, 1):
            if k % 2:
                work.execute(f"SELECT pg_sleep({ms / 1000})")  # simple protocol: `statement:`
            else:
                work.execute("SELECT pg_sleep(%s)", (ms / 1000,), prepare=True)  # extended: `execute`
            frame = sampler.sample(k, k * 0.5)
            for t in M.LATENCY_THRESHOLDS_MS:
                sums[t] += frame.values[M.STATEMENTS_LOG_OVER[t]] or 0
        time.sleep(0.3)  # the logging collector writes the last line
        end = log.stat().st_size
        frame = sampler.sample(len(SLEEPS_MS) + 1, (len(SLEEPS_MS) + 1) * 0.5)
        for t in M.LATENCY_THRESHOLDS_MS:
            sums[t] += frame.values[M.STATEMENTS_LOG_OVER[t]] or 0
    finally:
        sampler.close()
    with open(log, "rb") as f:
        f.seek(start)
        lines = _durations(f.read(end - start).decode(errors="replace"))
    assert len([x for x in lines if x >= 50]) == len(SLEEPS_MS)
    for t in M.LATENCY_THRESHOLDS_MS:
        want = sum(1 for x in lines if x > t)
        assert 0 < want < len(SLEEPS_MS)
        assert sums[t] == want, f"{M.STATEMENTS_LOG_OVER[t]}: {sums[t]} over the ticks, the log {want}"
    with capsys.disabled():
        print(f"\nover 100..500 ms: {[sums[t] for t in M.LATENCY_THRESHOLDS_MS]} (the log's: the same)")
