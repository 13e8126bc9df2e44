"""pgbench output parsing and the latency statistics, on captured output (tests/data/pgbench).

pg15/ and pg18/ are real captures (capture.py); pg13/ and pg14/ progress and summary lines are
synthesised from pgbench's format strings (synthesise_1314.py: no 13/14 pgbench exists here), and
their per-transaction log format is the 15+ one without the retries column, so the pg15 logs
stand for them.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from pgio_tui.stats import percentile
from pgio_tui.workloads import pgbench as pb
from pgio_tui.workloads import pgbench_invocation as inv
from pgio_tui.workloads import pgbench_output as out
from pgio_tui.workloads.latency import Histogram, combine, frame_values, summarize

DATA = Path(__file__).parent / "data" / "pgbench"
REAL = ("pg15", "pg18")


def read(version: str, name: str) -> list[str]:
    return (DATA / version / name).read_text().splitlines()


def log_lines(version: str, run: str) -> list[str]:
    lines = []
    for path in sorted((DATA / version).glob(f"{run}.log.*")):
        lines += path.read_text().splitlines()
    return lines


def latencies(version: str, run: str) -> tuple[list[float], list[out.LogEntry]]:
    entries = [out.parse_log_line(line) for line in log_lines(version, run)]
    assert all(e is not None for e in entries)
    return [e.latency_ms for e in entries if e.latency_ms is not None], entries


# -- progress lines ----------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["pg13", "pg14", "pg15", "pg18"])
def test_every_progress_line_parses(version):
    lines = [line for f in sorted((DATA / version).glob("*.stderr")) for line in f.read_text().splitlines()
             if line.startswith("progress:")]
    assert lines
    for line in lines:
        p = out.parse_progress(line)
        assert p is not None, line
        assert p.tps > 0 and p.lat_ms > 0


def test_progress_fields_of_each_format():
    old = out.parse_progress(read("pg13", "rate.stderr")[1])  # 13/14: no failed count
    assert (old.t, old.tps, old.lat_ms, old.stddev_ms, old.lag_ms, old.failed) == (1.0, 393.0, 0.817, 0.689, 0.146, None)
    new = out.parse_progress(read("pg15", "failures.stderr")[1])
    assert (new.failed, new.lag_ms, new.retried, new.retries) == (10, 0.253, 61, 81)
    stamp = out.parse_progress(read("pg13", "timestamp.stderr")[0])  # --progress-timestamp
    assert stamp.t == 1795225815.764
    assert out.parse_progress("starting vacuum...end.") is None


def test_init_progress():
    assert out.init_percent("100000 of 100000 tuples (100%) done (elapsed 0.04 s, remaining 0.00 s)") == 1.0
    line18 = [x for x in read("pg18", "init.stderr") if "tuples" in x][0]
    assert out.init_percent(line18) == 1.0  # 18: "... (100%) of pgbench_accounts done"
    assert out.init_percent("2500000 of 5000000 tuples (50%) done (elapsed 1.2 s, remaining 1.2 s)") == 0.5
    assert out.init_percent("creating tables...") is None


# -- per-transaction log -----------------------------------------------------------------------

@pytest.mark.parametrize("version", REAL)
def test_log_counts_match_the_summary(version):
    for run in ("plain", "rate", "failures"):
        _, entries = latencies(version, run)
        summary = out.parse_summary(read(version, f"{run}.stdout"))
        ok = sum(e.status == "ok" for e in entries)
        assert ok == summary["transactions"], run
        assert sum(e.status == "failed" for e in entries) == summary["failed"], run
    _, rate = latencies(version, "rate")
    assert all(e.lag_ms is not None and e.retries is None for e in rate)  # -R: schedule lag column
    _, failures = latencies(version, "failures")
    assert all(e.retries is not None for e in failures)  # --max-tries=3: retries column


def test_log_line_forms():
    e = out.parse_log_line("0 1 4984 0 1795221424 415210")
    assert (e.client, e.latency_ms, e.status, e.lag_ms, e.retries) == (0, 4.984, "ok", None, None)
    assert e.end_t == pytest.approx(1795221424.415210)
    assert out.parse_log_line("3 7 skipped 0 1795221424 415210 5000").status == "skipped"
    assert out.parse_log_line("3 7 serialization 0 1795221424 415210 0 2").status == "failed"
    assert out.parse_log_line("3 7 deadlock 0 1795221424 415210").status == "failed"
    for bad in ("", "0 1 4984 0 17952", "progress: 1.0 s", "0 1 49x4 0 1795221424 415210"):
        assert out.parse_log_line(bad) is None


@pytest.mark.parametrize("version", REAL)
def test_interrupted_log_keeps_complete_lines_only(version, tmp_path):
    """A SIGINTed pgbench leaves its log cut at a stdio buffer boundary, maybe mid-line."""
    raw = (DATA / version / "sigint.log.0").read_bytes()
    (tmp_path / "pgbench_log.42").write_bytes(raw[: len(raw) // 2])
    tail = pb._LogTail(str(tmp_path / "pgbench_log"))
    first = tail.read(42)
    (tmp_path / "pgbench_log.42").write_bytes(raw)
    second = tail.read(42)
    assert first + second == raw.decode().rsplit("\n", 1)[0].split("\n")
    assert all(out.parse_log_line(x) for x in first + second)


# -- summary -----------------------------------------------------------------------------------

def test_summary_13_14_15_18():
    s13 = out.parse_summary(read("pg13", "rate.stdout"))
    assert s13["tps"] == 398.295708 and s13["tps_including_connections"] == 397.22031
    assert "version" not in s13 and s13["lag_avg_ms"] == 6.074 and s13["lag_max_ms"] == 61.571
    s14 = out.parse_summary(read("pg14", "rate.stdout"))
    assert s14["version"] == "14.13" and s14["initial_connection_ms"] == 6.254 and s14["tps"] == 398.295708
    s15 = out.parse_summary(read("pg15", "plain.stdout"))
    assert s15["version"].startswith("15.") and s15["transactions"] == 2000 and s15["transactions_planned"] == 2000
    assert (s15["clients"], s15["threads"], s15["transactions_per_client"], s15["max_tries"]) == (2, 2, 1000, 1)
    s18 = out.parse_summary(read("pg18", "failures.stdout"))
    assert s18["version"] == "18.6" and s18["duration_s"] == 2 and s18["retries"] == 188
    assert s18["failed"] == 22 and s18["failed_pct"] == 1.866 and s18["retried"] == 145
    assert out.parse_summary(read("pg15", "sigint.stdout")) == {}  # interrupted: banner only


# -- latency statistics, on the captured logs --------------------------------------------------

@pytest.mark.parametrize("version,run", [(v, r) for v in REAL for r in ("plain", "rate", "failures")]
                         + [("pg13", "rate"), ("pg14", "rate")])
def test_mean_and_stddev_equal_pgbench_summary(version, run):
    """pgbench computes both over the same transactions: equal to its 3 printed decimals."""
    log_version = "pg15" if version in ("pg13", "pg14") else version
    lat, _ = latencies(log_version, run)
    summary = out.parse_summary(read(version, f"{run}.stdout"))
    stats = summarize(lat)
    assert stats.count == summary["transactions"]
    assert abs(stats.mean - summary["latency_avg_ms"]) <= 0.0005 + 1e-9
    assert abs(stats.stddev - summary["latency_stddev_ms"]) <= 0.0005 + 1e-9


@pytest.mark.parametrize("version", REAL)
def test_percentiles_on_captured_logs(version):
    lat, _ = latencies(version, "plain")
    stats = summarize(lat)
    q = statistics.quantiles(lat, n=100, method="inclusive")  # the same rule: linear between ranks
    assert stats.p50 == pytest.approx(statistics.median(lat))
    assert stats.p95 == pytest.approx(q[94]) and stats.p99 == pytest.approx(q[98])
    assert stats.max == max(lat)
    ordered = sorted(lat)
    for pct in (50, 95, 99):  # bracketed by the ranks around (n-1)p
        pos = (len(ordered) - 1) * pct / 100
        assert ordered[math.floor(pos)] <= percentile(ordered, pct) <= ordered[math.ceil(pos)]
    hist = Histogram()
    for v in lat:
        hist.add(v)
    h = hist.stats()
    assert h.count == stats.count and h.max == stats.max
    assert h.mean == pytest.approx(stats.mean) and h.stddev == pytest.approx(stats.stddev)
    for name in ("p50", "p95", "p99"):
        assert getattr(h, name) == pytest.approx(getattr(stats, name), rel=0.006)


def test_threshold_counts_and_small_sets():
    stats = summarize([50, 100, 100.001, 250, 600, 1200])
    assert stats.over == {100: 4, 200: 3, 300: 2, 400: 2, 500: 2}
    assert summarize([]).count == 0 and summarize([]).p99 is None
    one = summarize([3.0])
    assert (one.p50, one.p99, one.stddev) == (3.0, 3.0, 0.0)
    assert percentile([1, 2, 3, 4], 50) == 2.5
    values = frame_values(stats, 2.0, rate_scale=10)
    assert values["latency.tps"] == 30.0 and values["latency.txns"] == 6 and values["latency.over_500ms"] == 2


def test_combine_pools_progress_intervals():
    a, b = [1.0, 2.0, 3.0], [10.0, 20.0]
    n, mean, sd = combine([(3, statistics.fmean(a), statistics.pstdev(a)), (2, statistics.fmean(b), statistics.pstdev(b))])
    assert n == 5 and mean == pytest.approx(statistics.fmean(a + b)) and sd == pytest.approx(statistics.pstdev(a + b))


@pytest.mark.parametrize("version", REAL)
def test_error_line_of_a_bad_argument(version):
    assert out.error_line(read(version, "badarg.stderr")) == "pgbench: unrecognized option '--no-such-option'"


# -- arguments and environment -----------------------------------------------------------------

def test_options_detected_in_user_args():
    assert inv.has_option(["-c", "4", "-P", "5"], "P", "--progress")
    assert inv.has_option(["--progress=5"], "P", "--progress")
    assert inv.has_option(["-P5"], "P", "--progress")
    assert not inv.has_option(["-c", "4"], "P", "--progress")
    assert inv.option_value(["--log-prefix=/x/y", "-l"], None, "--log-prefix") == "/x/y"
    assert inv.option_value(["--sampling-rate", "0.1"], None, "--sampling-rate") == "0.1"


def test_connection_keeps_passwords_out_of_argv():
    """pgbench expands a conninfo given as its database argument: every keyword, services and
    URIs reach it as libpq parses them; the password goes apart, in PGPASSWORD."""
    from psycopg.conninfo import conninfo_to_dict
    env, args = inv.connection("host=/tmp/s port=5433 user=bob dbname=bench password=secret sslmode=disable "
                               "application_name=x connect_timeout=3")
    assert env == {"PGPASSWORD": "secret"} and len(args) == 1 and "secret" not in args[0]
    assert conninfo_to_dict(args[0]) == {
        "host": "/tmp/s", "port": "5433", "user": "bob", "dbname": "bench", "sslmode": "disable",
        "application_name": "x", "connect_timeout": "3"}
    assert conninfo_to_dict(inv.connection("service=lab")[1][0]) == {"service": "lab"}
    assert conninfo_to_dict(inv.connection("postgresql://u@h:5/d")[1][0]) == {
        "user": "u", "host": "h", "port": "5", "dbname": "d"}
    assert inv.connection("dbname=d") == ({}, ["d"]) and inv.connection("") == ({}, [])


def test_database_argument_told_from_option_values():
    assert not inv.has_database_arg(["-c", "4", "-T", "10", "-S", "-P5", "--log-prefix", "x", "--rate=5"])
    assert inv.has_database_arg(["-c", "4", "bench"]) and inv.has_database_arg(["-n", "bench"])
    assert not inv.has_database_arg(["-f", "script.sql", "-D", "a=1", "--builtin", "tpcb-like"])


def test_workload_argv(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    w = pb.PgbenchWorkload("dbname=x", ["--", "-c", "4", "-T", "10"], pgbench="/bin/pgbench", sampling_rate=0.5)
    assert w.argv[:3] == ["/bin/pgbench", "-P", "1"] and w.argv[-5:] == ["-c", "4", "-T", "10", "x"]
    assert "-l" in w.argv and "--sampling-rate=0.5" in w.argv and w.sampling_rate == 0.5
    with pytest.raises(pb.WorkloadError, match="give the database as CONN"):
        pb.PgbenchWorkload("dbname=x", ["-c", "4", "other"], pgbench="/bin/pgbench")
    mine = pb.PgbenchWorkload("", ["-P", "5", "--aggregate-interval=10", "-l"], pgbench="/bin/pgbench")
    assert mine.argv == ["/bin/pgbench", "-P", "5", "--aggregate-interval=10", "-l"] and mine.log_prefix is None
    init = pb.PgbenchWorkload("", ["-i", "-s", "5"], pgbench="/bin/pgbench")
    assert init.argv == ["/bin/pgbench", "-i", "-s", "5"]
    with pytest.raises(pb.WorkloadError, match="sampling-rate"):
        pb.PgbenchWorkload("", [], pgbench="/bin/pgbench", sampling_rate=2)


def test_pgbench_missing_is_one_line(monkeypatch, capsys):
    from pgio_tui import cli
    from pgio_tui.workloads import pg_binaries

    def missing(name="pgbench"):
        raise pg_binaries.ClusterError(f"no {name} found")

    monkeypatch.setattr(pg_binaries, "find_client", missing)
    assert cli.main(["bench", "pgbench", "--headless", "--", "-T", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pgbench not found" in err and "pgio-tui[embedded]" in err
