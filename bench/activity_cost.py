"""The tick's backends part (its one read of pg_stat_activity) by the number of processes: what
sources/backends.backends_every() is fitted to.

Starts a lab cluster, opens idle connections in steps and at each step runs the part (tick_sql's
backends_sql) --runs times, printing its server ms (median, mean), the stride backends_every()
takes for that many connected backends, and the part's resulting mean per tick; the load average
before and after.

    python bench/activity_cost.py [--major 18] [--steps 100,200,300,500,700,1000,1400] [--runs 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after PYTHONPATH: another tree can be benched

from pgio_tui.sources import pgfeatures  # noqa: E402
from pgio_tui.sources.backends import backends_every  # noqa: E402
from pgio_tui.sources.tick_sql import backends_sql  # noqa: E402
from pgio_tui.workloads.cluster import Cluster  # noqa: E402
from pgio_tui.workloads.pg_binaries import find_bindir  # noqa: E402

MS = "(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--major", type=int, default=18)
    ap.add_argument("--steps", default="100,200,300,500,700,1000,1400")
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args()
    steps = [int(x) for x in args.steps.split(",")]
    print(load(), "before")
    settings = {"max_connections": str(max(steps) + 60), "shared_buffers": "128MB"}
    with Cluster(bindir=find_bindir(args.major), settings=settings) as cluster:
        with cluster.connect() as conn:
            sql = f"SELECT ({backends_sql(pgfeatures.detect(conn))}), {MS}"
            idle = []
            try:
                for n in steps:
                    while len(idle) < n:
                        idle.append(cluster.connect())
                    time.sleep(4)  # past the part's recent window: the new clients read as long idle
                    ms = [conn.execute(sql, {"recent_s": 3.0}).fetchone()[-1] for _ in range(args.runs)]
                    backends = conn.execute("SELECT sum(numbackends) FROM pg_stat_database").fetchone()[0]
                    k = backends_every(backends)
                    print(f"PostgreSQL {cluster.version}, {n} idle clients ({backends} backends): backends part "
                          f"median {statistics.median(ms):.3f} ms, mean {statistics.mean(ms):.3f}; read every "
                          f"{k} tick(s): {statistics.mean(ms) / k:.3f} ms a tick", flush=True)
            finally:
                for c in idle:
                    c.close()
    print(load(), "after")


if __name__ == "__main__":
    main()
