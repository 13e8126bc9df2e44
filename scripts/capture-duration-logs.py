"""Capture real `duration:` log lines for the slow-statement parser tests (sources/slowlog.py).

tests/data/logs/duration-pg<major>.<fmt>: the server log of a short session with
log_min_duration_statement = 0 in stderr ('%m [%p] %q%u@%d %a '), csvlog and jsonlog (15+):
simple-protocol statements with pg_sleep, the extended protocol (parse/bind/execute lines, a
prepared statement), a statement text with a newline, a forged `RAISE LOG 'duration: ...'`, an
auto_explain plan line, and pgio-tui-marked statements.

usage: PYTHONPATH=. python scripts/capture-duration-logs.py [MAJOR ...]   (default 13 and 18)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pgio_tui.sources.pgfeatures import own
from pgio_tui.workloads.cluster import Cluster
from pgio_tui.workloads.pg_binaries import find_bindir

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "logs"


def session(c: Cluster) -> None:
    with c.connect(autocommit=True) as conn:
        conn.execute("SELECT pg_sleep(0.12)")
        conn.execute("SELECT pg_sleep(%s)", (0.23,))  # extended protocol: parse, bind, execute lines
        for _ in range(6):  # psycopg prepares it from the 5th run: execute <name>
            conn.execute("SELECT pg_sleep(%s) /* prepared */", (0.01,))
        conn.execute("SELECT 1,\n  pg_sleep(0.31)")
        conn.execute("DO $$ BEGIN RAISE LOG 'duration: 999.000 ms  statement: forged'; END $$")
        conn.execute("/* pgio-tui tick */ SELECT pg_sleep(0.15)")  # the marker first: pgio-tui before 2026-11-23
        conn.execute(own("tick", "SELECT pg_sleep(0.16)"))  # the marker after the first word: pgio-tui now
        conn.execute("LOAD 'auto_explain'")
        conn.execute("SET auto_explain.log_min_duration = 0")
        conn.execute("SELECT pg_sleep(0.42)")


def capture(major: int) -> None:
    fmts = ["stderr", "csvlog"] + (["jsonlog"] if major >= 15 else [])
    for fmt in fmts:
        settings = {"log_min_duration_statement": "0", "log_destination": fmt,
                    "log_line_prefix": "%m [%p] %q%u@%d %a ", "log_checkpoints": "off"}
        ext = {"stderr": "log", "csvlog": "csv", "jsonlog": "json"}[fmt]
        with Cluster(bindir=find_bindir(major), settings=settings, name=f"dur{major}") as c:
            session(c)
            time.sleep(1.5)  # the logging collector writes what it got
            logdir = c.server_log_path().parent
            text = "".join(p.read_text() for p in sorted(logdir.glob(f"*.{ext}")))
        lines = [ln for ln in text.splitlines(keepends=True)]
        start = next(i for i, ln in enumerate(lines) if "pg_sleep(0.12)" in ln)
        out = DATA / f"duration-pg{major}.{ext}"
        out.write_text("".join(lines[max(0, start - 1):]))
        print(f"{out}: {len(lines) - start} lines")


if __name__ == "__main__":
    for m in [int(a) for a in sys.argv[1:]] or [13, 18]:
        capture(m)
