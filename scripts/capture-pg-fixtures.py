"""Capture real server output per PostgreSQL major for the parser tests.

tests/data/logs/pg<major>.log: the checkpoint log lines (fast, WAL-triggered, timed and shutdown
checkpoints, "occurring too frequently") verbatim with their '%m [%p] ' prefix.

usage: python scripts/capture-pg-fixtures.py [MAJOR ...]   (default 13-18, in parallel; ~90 s)
Binaries come from find_bindir(major): run scripts/pg-matrix.sh --fetch-only first.
"""

from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pgio_tui.sources.pgfeatures import SUPPORTED_MAJORS
from pgio_tui.workloads.cluster import Cluster, find_bindir

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
CHECKPOINT_LINE = re.compile(r"checkpoint starting:|checkpoint complete:|checkpoints are occurring too frequently")
SETTINGS = {"checkpoint_timeout": "30s", "max_wal_size": "32MB", "min_wal_size": "32MB"}


def capture(major: int) -> str:
    with Cluster(bindir=find_bindir(major), settings=SETTINGS, name=f"capture{major}") as c:
        with c.connect() as conn:
            conn.execute("create table t (id int, pad text)")
            conn.execute("insert into t select g, repeat('x', 100) from generate_series(1, 10000) g")
            conn.execute("CHECKPOINT")  # "immediate force wait" ("fast" from 18)
            for _ in range(3):  # about 3 x 25 MB of WAL against max_wal_size 32MB: WAL checkpoints, too frequent
                conn.execute("insert into t select g, repeat('y', 100) from generate_series(1, 150000) g")
            conn.execute("update t set pad = 'z' where id <= 1000")  # dirty data for the timed checkpoint
            started = c.log_text().count("checkpoint starting: time")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not timed_checkpoint_done(c.log_text(), started):
                time.sleep(1)
        c.stop()  # the shutdown checkpoint
        lines = [line for line in c.log_text().splitlines() if CHECKPOINT_LINE.search(line) or hint_after(line)]
    (DATA / "logs" / f"pg{major}.log").write_text("\n".join(lines) + "\n")
    return f"PG {c.version}: {len(lines)} log lines"


def timed_checkpoint_done(log: str, started_before: int) -> bool:
    tail = log.split("checkpoint starting: time")
    return len(tail) - 1 > started_before and "checkpoint complete:" in tail[-1]


def hint_after(line: str) -> bool:
    """The HINT that belongs to the "too frequently" message."""
    return "HINT:" in line and "max_wal_size" in line


def main(argv: list[str]) -> None:
    majors = [int(a) for a in argv] or list(SUPPORTED_MAJORS)
    (DATA / "logs").mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(len(majors)) as pool:
        for result in pool.map(capture, majors):
            print(result)


if __name__ == "__main__":
    main(sys.argv[1:])
