"""Write the PostgreSQL 13 and 14 pgbench fixtures (pg13/, pg14/).

SYNTHESISED, not captured: no pgbench 13 or 14 binary is available here (the cached 13/14 servers
ship none). The lines are printed with the C format strings of pgbench 13 and 14 as recorded in
pgbench.c of those majors (Python's % formatting is C's for these conversions), filled
with the figures of the real pg15 "rate" capture (read from pg15/rate.*), so the same run reads
in every format; rerun this after capture.py. The
per-transaction log of 13/14 has exactly the 15+ columns when --max-tries is 1, so the tests
use the captured pg15 logs for 13/14 too.

    python tests/data/pgbench/synthesise_1314.py
"""

import re
from pathlib import Path

HERE = Path(__file__).parent

PG15 = HERE / "pg15"


def _pg15_rate():
    """Figures of the real pg15 "rate" run (-c 2 -j 2 -T 3 -R 400 -P 1 -l), read from its capture."""
    progress = [tuple(float(x) for x in re.match(
        r"progress: ([\d.]+) s, ([\d.]+) tps, lat ([\d.]+) ms stddev ([\d.]+), \d+ failed, lag ([\d.]+) ms", line).groups())
        for line in (PG15 / "rate.stderr").read_text().splitlines() if line.startswith("progress:")]
    out = (PG15 / "rate.stdout").read_text()

    def num(rx):
        return float(re.search(rx, out).group(1))

    run = dict(clients=int(num(r"number of clients: (\d+)")), threads=int(num(r"number of threads: (\d+)")),
               duration=int(num(r"duration: (\d+) s")), processed=int(num(r"actually processed: (\d+)")),
               lat_avg=num(r"latency average = ([\d.]+)"), lat_stddev=num(r"latency stddev = ([\d.]+)"),
               lag_avg=num(r"lag: avg ([\d.]+)"), lag_max=num(r"\(max ([\d.]+)\)"),
               conn_ms=num(r"initial connection time = ([\d.]+)"), tps=num(r"tps = ([\d.]+)"))
    return progress, run


PROGRESS, RUN = _pg15_rate()


def progress(major: int) -> str:
    # 13/14: "progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f" + ", lag %.3f ms" with -R
    lines = ["starting vacuum...end."]
    for t, tps, lat, sd, lag in PROGRESS:
        lines.append("progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f" % (t, tps, lat, sd) + ", lag %.3f ms" % lag)
    return "\n".join(lines) + "\n"


def summary(major: int) -> str:
    r = RUN
    lines = [] if major == 13 else ["pgbench (%s)" % "14.13"]  # 14+ prints a banner
    lines += [
        "transaction type: <builtin: TPC-B (sort of)>",
        "scaling factor: %d" % 1,
        "query mode: %s" % "simple",
        "number of clients: %d" % r["clients"],
        "number of threads: %d" % r["threads"],
        "duration: %d s" % r["duration"],
        "number of transactions actually processed: %d" % r["processed"],  # C: %lld
        "latency average = %.3f ms" % r["lat_avg"],
        "latency stddev = %.3f ms" % r["lat_stddev"],
        "rate limit schedule lag: avg %.3f (max %.3f) ms" % (r["lag_avg"], r["lag_max"]),
    ]
    if major == 13:
        # 13: tps including and excluding connection establishment
        lines += ["tps = %f (including connections establishing)" % (r["tps"] * 0.9973),
                  "tps = %f (excluding connections establishing)" % r["tps"]]
    else:
        lines += ["initial connection time = %.3f ms" % r["conn_ms"],
                  "tps = %f (without initial connection time)" % r["tps"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    for major in (13, 14):
        d = HERE / f"pg{major}"
        d.mkdir(exist_ok=True)
        (d / "rate.stderr").write_text(progress(major))
        (d / "rate.stdout").write_text(summary(major))
        (d / "rate.argv").write_text("pgbench -c 2 -j 2 -T 3 -R 400 -P 1 -l --log-prefix=rate\n")
        (d / "SYNTHESISED").write_text("Written by synthesise_1314.py from pgbench's format strings; not a capture.\n")
        # --progress-timestamp: 13 prints "%ld.%03ld s" (epoch seconds and milliseconds)
        (d / "timestamp.stderr").write_text(
            "progress: %d.%03d s, %.1f tps, lat %.3f ms stddev %.3f\n" % (1795225815, 764, 441.0, 0.513, 0.330))


if __name__ == "__main__":
    main()
