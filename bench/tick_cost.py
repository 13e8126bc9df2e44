"""Server time per tick with a busy catalog: 5,000 entries in pg_stat_statements and 200 backends.

Starts a lab cluster (pg_stat_statements.max 6000, max_connections 260), fills pg_stat_statements
with --statements distinct statements (distinct query shapes, so distinct queryids), opens
--backends idle connections (10 of them run 20 fixed statements between ticks, so some entries
change every tick, as on a real server), then runs the real Sampler for --ticks ticks and prints
observer.server_ms (clock_timestamp() - statement_timestamp() at the end of the tick query), the
CPU of the sampler's backend (/proc: every statement it ran, the tick's and the occasional
classification of new statements alike), where the mean goes (ticks without a pg_stat_statements
read, reads of the sums, of every entry, of query texts), on how many ticks pg_stat_activity was
read (every k-th with many processes: sources/backends.backends_every), the client's collect time
and CPU, and the load average. Target (issue 28): server ms mean <= 1.

    python bench/tick_cost.py [--ticks 120] [--statements 5000] [--backends 200] [--major 17]
    python bench/tick_cost.py --backends 1000 --statements 20000   # at scale

Run it on another tree (PYTHONPATH=/path/to/tree) for before/after figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after PYTHONPATH: another tree can be benched

from pgio_tui.sampler import Sampler  # noqa: E402
from pgio_tui.sources.statements import ROWS, SUMS  # noqa: E402
from pgio_tui.workloads.cluster import Cluster  # noqa: E402
from pgio_tui.workloads.pg_binaries import find_bindir  # noqa: E402


def statement(i: int) -> str:
    """The i-th distinct query shape: i = 71 * a + b gives a sum of a+1 terms and b+1 more columns."""
    a, b = divmod(i, 71)
    return f"SELECT {' + '.join(['x'] * (a + 1))}, {', '.join(['y'] * (b + 1))} FROM (VALUES (1, 2)) AS v(x, y)"


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


PART_RUNS = 300


def cpu_ms(pid: int) -> float:
    """User + system CPU of a process so far, ms (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def read_of(kind: int, texts: bool) -> str:
    """What a tick read of pg_stat_statements, as the breakdown names it."""
    name = "every entry" if kind & ROWS else "the sums" if kind & SUMS else "nothing"
    return name + (" + texts" if texts else "")


def part_cost(sampler: Sampler) -> dict[str, list[float]]:
    """Server ms of the tick's per-process parts, run alternately on the sampler's connection so
    that the machine's load weighs on all alike: the backends part (pg_stat_activity, a row made
    for every process), its floor (the status array copied) and on 18 pg_aios (every AIO handle
    visited)."""
    from pgio_tui.sources.tick_sql import aios_sql, backends_sql
    f, conn = sampler.pg.features, sampler.pg.conn
    ms = "(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8"
    runs = {"backends part": (f"SELECT ({backends_sql(f)}), {ms}", {"recent_s": sampler.pg.recent_s}),
            # its floor: any read of a process's status first copies the server's whole status array
            "status array copy": (f"SELECT (SELECT count(*) FROM pg_stat_get_backend_idset()), {ms}", {})}
    if f.aios:
        runs["pg_aios"] = (f"SELECT ({aios_sql()}), {ms}", {})
    out: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(PART_RUNS):
        for name, (sql, params) in runs.items():
            out[name].append(conn.execute(sql, params).fetchone()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--statements", type=int, default=5000)
    ap.add_argument("--backends", type=int, default=200)
    ap.add_argument("--major", type=int, default=None, help="PostgreSQL major (default: newest found)")
    args = ap.parse_args()

    settings = {"pg_stat_statements.max": str(max(6000, args.statements + 1000)),
                "max_connections": str(args.backends + 60), "shared_buffers": "128MB"}
    load0 = load()
    with Cluster(bindir=find_bindir(args.major), settings=settings) as cluster:
        with cluster.connect() as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            for i in range(args.statements):
                c.execute(statement(i))
            n = c.execute("SELECT count(*) FROM pg_stat_statements").fetchone()[0]
        conns = [cluster.connect() for _ in range(args.backends)]
        sampler = Sampler(cluster.conninfo(), interval=args.interval)
        sampler.open()
        server, collect, cpu, pgss, stmt_ticks, sampled = [], [], [], [], 0, 0
        by_read: dict[str, list[float]] = {}
        backend = sampler.pg.connection.info.backend_pid
        t0 = time.monotonic()
        try:
            for k, frame in enumerate(sampler.frames(duration=args.ticks * args.interval)):
                for j in range(20):  # the workload: 20 statements, some entries change every tick
                    conns[j % 10].execute(statement(j * 97 % args.statements))
                if k < 3:  # warm-up: plan caching, the first statement rows
                    if k == 2:
                        server_cpu0 = cpu_ms(backend)
                    continue
                v = frame.values
                if v.get("observer.server_ms") is not None:
                    server.append(v["observer.server_ms"])
                    read = read_of(sampler.server._stmt_kind, bool(sampler.server._stmt_texts))
                    by_read.setdefault(read, []).append(v["observer.server_ms"])
                collect.append(v["observer.collect_ms"])
                if v.get("observer.cpu_ms") is not None:
                    cpu.append(v["observer.cpu_ms"])
                if v.get("observer.statements_ms") is not None:
                    pgss.append(v["observer.statements_ms"])
                stmt_ticks += v.get("statements.mean_ms") is not None
                sampled += v.get("sessions.active") is not None  # read pg_stat_activity (a wait sample)
            server_cpu = (cpu_ms(backend) - server_cpu0) / len(collect)
            part = part_cost(sampler)
        finally:
            sampler.close()
            for conn in conns:
                conn.close()
        wall = time.monotonic() - t0
    print(f"PostgreSQL {cluster.version}: {n} entries in pg_stat_statements, {args.backends} idle backends "
          f"(10 of them running 20 statements per tick), {len(server)} ticks at {args.interval:g} s in {wall:.0f} s")
    print(f"{load0} before, {load()} after")
    print(f"server ms per tick: mean {statistics.mean(server):.2f}, median {statistics.median(server):.2f}, "
          f"p95 {pct(server, 0.95):.2f}, max {max(server):.2f}; target mean <= 1: "
          f"{'OK' if statistics.mean(server) <= 1 else 'OVER'}")
    print(f"server CPU ms per tick (the sampler's backend, /proc, every statement it ran): {server_cpu:.2f}")
    print("where the mean goes, by what the tick read of pg_stat_statements:")
    for read, ms in sorted(by_read.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {read:22s} {len(ms):4d} ticks, mean {statistics.mean(ms):6.2f} ms, median "
              f"{statistics.median(ms):6.2f}: {sum(ms) / len(server):.2f} ms of the mean")
    steady = server[30:]
    if steady:
        print(f"server ms per tick after the first 30 ticks (start-up: the first read of every entry and "
              f"the one-time text read): mean {statistics.mean(steady):.2f}, p95 {pct(steady, 0.95):.2f}")
    print(f"of which the pg_stat_statements part: mean {statistics.mean(pgss):.2f} ms; statement latency "
          f"(statements.mean_ms) on {stmt_ticks} of {len(collect)} ticks")
    print(f"pg_stat_activity read (a wait sample) on {sampled} of {len(collect)} ticks "
          f"(sources/backends.backends_every: every {len(collect) / max(1, sampled):.1f} ticks)")
    print(f"per-process parts ({PART_RUNS} runs each, alternating): " + "; ".join(
              f"{name} median {statistics.median(v):.3f} ms, mean {statistics.mean(v):.3f}" for name, v in part.items()))
    print(f"client collect ms per tick: mean {statistics.mean(collect):.2f}, p95 {pct(collect, 0.95):.2f}; "
          f"client CPU ms per tick: mean {statistics.mean(cpu):.2f} "
          f"({statistics.mean(cpu) / (10 * args.interval):.2f} % of a core: the sampler only, no screen)")


if __name__ == "__main__":
    main()
