"""`experiment report`: every figure against an independent computation from the recordings (raw
SQL on the files; pgbench's own per-transaction log for a real run), the shapes of table, markdown,
csv, json, and the HTML page: self-contained, its charts, hostile text escaped.

Synthetic experiment folders are made of the fixture recording (tests/fixture_recording.py, what
the recorder writes) with one plan around them; one real sweep on a throwaway cluster at toy
length checks the transaction figures against pgbench's log."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sqlite3
import statistics
from pathlib import Path

import pytest

from fixture_recording import write_fixture
from hostile import HTML, PAYLOAD, make_hostile
from pgio_tui import cli
from pgio_tui.analysis.repeats import t975
from pgio_tui.experiments.plan import Plan, Run, save
from pgio_tui.store.reader import Recording

HAS_FLAGS = "flags" in Run.__dataclass_fields__  # the runner's flags, stored per run in experiment.json
HAS_STATEMENTS = "statements" in Run.__dataclass_fields__  # pg_stat_statements at each run's end, likewise


def make_folder(folder: Path, sweep: dict[str, list[str]], repeat: int = 2, hostile: bool = False,
                flags: dict[int, list] | None = None, statements: dict[int, list] | None = None) -> Plan:
    """An experiment folder whose runs are fixture recordings (a different seed each), all done."""
    plan = Plan(sweep=sweep, repeat=repeat, order="interleaved",
                workload={"kind": "pgbench", "args": ["-c", "8", "-T", "60"], "init_scale": 1}, target={"lab": True})
    plan.make_runs()
    (folder / "runs").mkdir(parents=True)
    for run in plan.runs:
        run.file = plan.run_file(run)
        path = folder / run.file
        write_fixture(path, n=60, seed=run.index, incidents=False)
        if hostile:
            tmp = path.with_suffix(".tmp")
            path.rename(tmp)
            make_hostile(tmp, path)
            tmp.unlink()
            with sqlite3.connect(path) as c:
                c.execute("UPDATE statements SET text = ? || text", (PAYLOAD,))
        run.state, run.applied = "done", dict(run.settings)
    plan.restored = True
    save(plan, folder)
    if flags and HAS_FLAGS:  # as the runner stores them with the run in experiment.json
        data = json.loads((folder / "experiment.json").read_text())
        for r in data["runs"]:
            r["flags"] = flags.get(r["index"], [])
        (folder / "experiment.json").write_text(json.dumps(data))
    if statements and HAS_STATEMENTS:
        data = json.loads((folder / "experiment.json").read_text())
        for r in data["runs"]:
            r["statements"] = statements.get(r["index"], [])
        (folder / "experiment.json").write_text(json.dumps(data))
    return plan


def report(folder: Path, capsys, *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(folder), *args]) == 0
    return capsys.readouterr().out


def window_ticks(c: sqlite3.Connection) -> list[tuple]:
    """(tick, t, dt) of the workload's run, dt from the previous tick's time (the first: the interval),
    straight from the file."""
    start, stop = c.execute("SELECT start_t, stop_t FROM workloads").fetchone()
    rows = c.execute("SELECT tick, t FROM ticks ORDER BY tick").fetchall()
    out, prev = [], None
    for tick, t in rows:
        if start - 1e-6 <= t <= stop + 1e-6:
            out.append((tick, t, (t - prev) if prev is not None else 1.0))
        prev = t
    return out


def independent(path: Path) -> dict[str, float]:
    """A few figures computed from the file with SQL and arithmetic, not with pgio-tui's analysis."""
    c = sqlite3.connect(path)
    win = window_ticks(c)
    ticks = {tick: dt for tick, _, dt in win}
    lo, hi = min(ticks), max(ticks)

    def integral(col: str) -> float:
        vals = dict(c.execute(f'SELECT tick, "{col}" FROM ticks WHERE tick BETWEEN ? AND ?', (lo, hi)).fetchall())
        return math.fsum((vals[t] or 0.0) * dt for t, dt in ticks.items())

    out = {"writes_backend": integral("writes.backend"), "writes_checkpointer": integral("writes.checkpointer"),
           "wal_mib": integral("wal.bytes_s") / 2 ** 20}
    out["over_100"] = c.execute('SELECT sum("latency.over_100ms") FROM ticks WHERE tick BETWEEN ? AND ?',
                                (lo, hi)).fetchone()[0]
    dirty = [v for (v,) in c.execute('SELECT "mem.dirty_kb" FROM ticks WHERE tick BETWEEN ? AND ?', (lo, hi))]
    out["dirty_mean"] = sum(dirty) / len(dirty) / 1024
    util = c.execute("SELECT d.util_pct FROM disk d JOIN devices v ON v.id = d.device_id "
                     "WHERE v.role = 'data' AND d.tick BETWEEN ? AND ?", (lo, hi)).fetchall()
    out["pgdata_util"] = sum(u for (u,) in util) / len(util)
    calls, time_us, sq = c.execute(
        "SELECT sum(s.calls), sum(s.time_us), sum(s.calls * s.stddev_us * s.stddev_us + s.time_us * 1.0 * s.time_us "
        "/ s.calls) FROM statement_stats s JOIN statements st ON st.id = s.statement_id "
        "WHERE st.text LIKE 'UPDATE pgbench_accounts%' AND s.tick BETWEEN ? AND ?", (lo, hi)).fetchone()
    out["stmt_mean"] = time_us / calls / 1000
    out["stmt_stddev"] = math.sqrt(sq / calls / 1e6 - out["stmt_mean"] ** 2)
    return out


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("grid") / "exp"
    make_folder(folder, {"shared_buffers": ["64MB", "128MB"], "os.page_cache": ["100MB", "200MB", "400MB"]},
                flags={2: [{"kind": "autovacuum", "text": "autovacuum ran in the run's window: VACUUM pgbench_accounts"}],
                       5: [{"kind": "dirty_at_start", "text": "started with Dirty 900 MB above the background threshold"}]})
    return folder


def test_figures_equal_independent_computations(grid, capsys):
    """Per run: buffers written, WAL generated, Dirty mean, PGDATA util, transactions over 100 ms and the
    UPDATE pgbench_accounts statement's mean and stddev as computed from the file; per combination the
    mean of the repeats and the 95 % t-interval (t 12.706 for 2 repeats)."""
    data = json.loads(report(grid, capsys, "--format", "json"))
    plan = json.loads((grid / "experiment.json").read_text())
    stmt = next(f for f in data["figures"] if f["group"] == "statements" and
                f["statement"].startswith("UPDATE pgbench_accounts") and f["key"].endswith("_mean"))["key"]
    assert stmt.startswith("stmt1_")  # the busiest statement of the fixture comes first
    for row in data["rows"]:
        files = [r["file"] for r in plan["runs"] if r["settings"] == row["settings"]]
        assert row["repeats"] == len(files) == 2
        want = [independent(grid / f) for f in files]
        for got, exp in zip(row["runs"], want):
            for key in ("writes_backend", "writes_checkpointer", "wal_mib", "dirty_mean", "pgdata_util"):
                assert got[key] == pytest.approx(exp[key], rel=1e-9), key
            assert got["over_100"] == exp["over_100"]
            assert got[stmt] == pytest.approx(exp["stmt_mean"], rel=1e-9)
            assert got[stmt.replace("_mean", "_stddev")] == pytest.approx(exp["stmt_stddev"], rel=1e-6)
        for key in ("writes_backend", "wal_mib", stmt):
            xs = [r[key] for r in row["runs"]]
            f = row["figures"][key]
            half = 12.7062 * statistics.stdev(xs) / math.sqrt(2)
            assert f["mean"] == pytest.approx(statistics.fmean(xs)) and f["sd"] == pytest.approx(statistics.stdev(xs))
            assert (f["ci95_low"], f["ci95_high"]) == pytest.approx((statistics.fmean(xs) - half, statistics.fmean(xs) + half))
    assert t975(1) == pytest.approx(12.7062)
    base, other = data["rows"][0], data["rows"][1]
    assert base["settings"] == data["baseline"] == {"shared_buffers": "64MB", "os.page_cache": "100MB"}
    f = other["figures"]["wal_mib"]
    a, b = [r["wal_mib"] for r in base["runs"]], [r["wal_mib"] for r in other["runs"]]
    assert f["change_pct"] == pytest.approx(100 * (statistics.fmean(b) / statistics.fmean(a) - 1))
    # the floor of a figure above 0: the largest ratio of two baseline repeats; in the unit, their range
    assert f["noise_floor_pct"] == pytest.approx(100 * (max(a) / min(a) - 1))
    assert f["noise_floor"] == pytest.approx(max(a) - min(a))
    # no transaction histograms in the fixture: no percentiles rather than a mean of per-tick ones
    assert "lat_p99" not in {x["key"] for x in data["figures"]}
    assert not HAS_FLAGS or [r["flags"] for r in data["runs"]][1] == ["autovacuum ran in the run's window: VACUUM pgbench_accounts"]


def test_text_formats_have_their_shapes(grid, capsys):
    table = report(grid, capsys)
    head = table.splitlines()[0].split()
    assert head[:3] == ["figure", "unit", "settings"] and head[-1] == "verdict"
    combos = 6
    body = [ln for ln in table.split("\n\n")[0].splitlines()[1:]]
    assert len(body) % combos == 0 and sum("baseline" in ln for ln in body) == len(body) // combos
    assert not HAS_FLAGS or "flags:" in table and "run 2 (shared_buffers=64MB os.page_cache=200MB, repeat 1): autovacuum" in table
    assert re.search(r"^WAL device w_await +ms +shared_buffers=64MB os.page_cache=100MB +2 ", table, re.M)

    md = report(grid, capsys, "--format", "markdown")
    rows = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert rows[0] == ("| figure | unit | settings | n | mean | 95 % interval | change | noise floor | detectable "
                       "| verdict |")
    assert all(ln.count(" | ") == 9 for ln in rows[2:]) and len(rows) - 2 == len(body)
    assert not HAS_FLAGS or "**flags**" in md

    rows = list(csv.reader(io.StringIO(report(grid, capsys, "--format", "csv"))))
    assert rows[0] == ["figure", "unit", "settings", "n", "mean", "ci95_low", "ci95_high", "change_pct",
                       "noise_floor_pct", "verdict", "name", "detectable_pct"]
    assert len(rows) - 1 == len(body) and all(len(r) == 12 for r in rows)
    assert {"latency.tps:mean", "writes.backend:total"} <= {r[10] for r in rows}  # named by catalog key
    wal = [r for r in rows if r[0] == "WAL generated"]
    assert len(wal) == combos and wal[0][7] == "" and float(wal[1][7]) == pytest.approx(float(wal[1][7]))

    data = json.loads(report(grid, capsys, "--format", "json", "--baseline", "os.page_cache=200MB"))
    assert data["baseline"] == {"shared_buffers": "64MB", "os.page_cache": "200MB"}
    assert len(data["rows"]) == combos and {r["repeats"] for r in data["rows"]} == {2}
    keys = [f["key"] for f in data["figures"]]
    assert all(set(r["figures"]) == set(keys) for r in data["rows"])
    assert {"tps", "writes_backend", "share_backend", "dirty_mean", "pgdata_util", "wal_util", "wal_mib",
            "checkpoints", "over_100"} <= set(keys)


def test_html_page_has_its_charts_and_nothing_external(grid, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert cli.main(["experiment", "report", str(grid), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched
    assert "<script src" not in page and "@import" not in page
    glance = re.search(r"<h2>At a glance</h2>.*?</table>", page, re.S).group()
    assert glance.count("<tr>") == 7 and "(baseline)" in glance and "tps (1/s)" in glance
    titles = re.findall(r"<details open><summary><b>([^<]+)</b>", page)  # one folding table per group
    assert titles[:2] == ["Throughput and latency (transactions)",
                          "Statements (pg_stat_statements: execution time, not transaction latency)"]
    assert {"Buffers written by source", "Devices", "WAL"} <= set(titles)
    # a heat map per figure of the 2 × 3 grid, with 6 cells each
    heats = re.findall(r'<svg class="heat".*?</svg>', page, re.S)
    assert heats and all(h.count("<rect") == 6 for h in heats)
    assert "shared_buffers" in heats[0] and "os.page_cache" in heats[0]
    # small multiples: three charts per run; a scatter per run with its r
    assert page.count('class="grid3"') == 24 and len(re.findall(r"PGDATA w_await", page)) >= 12
    # per run, writes by source stacked over time (12 runs); checkpoints as bands on the time charts
    runs = page.split("<h2>Runs, in run order</h2>", 1)[1].split("</table>", 1)[0]
    assert "<th>tps (1/s)</th>" in runs and runs.count("<tr>") == 13  # a row per run with its headline figures
    stacks = page.split("Writes by source and wait events over time", 1)[1]
    assert stacks.count('aria-label="buffers written"') == 12 and "<title>checkpoint" in page
    rs = dict(re.findall(r'aria-label="run (\d+): r = ([+-]\d\.\d\d)"', page))
    assert len(rs) == 12
    plan = json.loads((grid / "experiment.json").read_text())
    for run in plan["runs"][:3]:  # Pearson's r of Writeback and the tick's p99, from the file
        c = sqlite3.connect(grid / run["file"])
        ticks = [t for t, _, _ in window_ticks(c)]
        wb, p99 = zip(*c.execute('SELECT "mem.writeback_kb", "latency.p99_ms" FROM ticks WHERE tick BETWEEN ? AND ?',
                                 (min(ticks), max(ticks))).fetchall())
        assert float(rs[str(run["index"])]) == pytest.approx(statistics.correlation(wb, p99), abs=0.006)
    assert not HAS_FLAGS or "autovacuum ran in the run" in page and "Dirty 900 MB" in page


def test_html_escapes_hostile_text(tmp_path, capsys):
    """Device names, statement texts, hosts, settings from a recording, and a swept value itself,
    carry <script> and escape sequences: none arrives as markup or as a control byte."""
    folder = tmp_path / "exp"
    make_folder(folder, {"application_name": ["<b>x</b>", "y"]}, hostile=True,
                flags={1: [{"kind": "x", "text": HTML}]})
    out = tmp_path / "r.html"
    assert cli.main(["experiment", "report", str(folder), "--format", "html", "-o", str(out)]) == 0
    page = out.read_text()
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", page)
    assert "\\x1b" in page  # the escape shown, not sent
    md = report(folder, capsys, "--format", "markdown")
    assert "<script>" not in md and "\x1b" not in md
    table = report(folder, capsys)
    assert "\x1b" not in table and "\x9b" not in table


@pytest.mark.skipif(not HAS_STATEMENTS, reason="the runner does not keep pg_stat_statements per run yet")
def test_statements_from_the_server_at_each_runs_end(tmp_path, capsys):
    """When the runner kept pg_stat_statements as each run left it, those are the statement figures
    (the server's own for the whole run), matched between runs by their text."""
    upd = "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
    rows = {i: [{"queryid": "-5", "query": upd, "calls": 1000 * i, "total_ms": 900.0 * i, "mean_ms": 0.5 + i / 10,
                 "stddev_ms": 0.25 * i},
                {"queryid": "7", "query": "SELECT 1", "calls": 3, "total_ms": 0.1, "mean_ms": 0.03, "stddev_ms": 0.0},
                # pgio-tui's own and utility statements are left out, as the recorder leaves them out
                {"queryid": "8", "query": "/* pgio-tui settings */ SELECT 1", "calls": 1, "total_ms": 9e9,
                 "mean_ms": 9e9, "stddev_ms": 0.0},
                {"queryid": "9", "query": "CREATE FUNCTION f() ...", "calls": 1, "total_ms": 8e9, "mean_ms": 8e9,
                 "stddev_ms": 0.0}]
            for i in range(1, 5)}
    folder = tmp_path / "exp"
    make_folder(folder, {"backend_flush_after": ["0", "2MB"]}, statements=rows)
    data = json.loads(report(folder, capsys, "--format", "json"))
    first = [f for f in data["figures"] if f["group"] == "statements"][:3]
    assert [(f["key"], f["statement"]) for f in first] == [("stmt1_mean", upd), ("stmt1_stddev", upd),
                                                           ("stmt1_calls", upd)]
    base, other = data["rows"]
    assert [r["stmt1_mean"] for r in base["runs"]] == [0.6, 0.8] and [r["stmt1_stddev"] for r in other["runs"]] == [0.5, 1.0]
    ch = other["figures"]["stmt1_stddev"]
    assert ch["change_pct"] == pytest.approx(100 * (0.75 / 0.5 - 1)) and ch["noise_floor_pct"] == pytest.approx(200.0)
    assert ch["verdict"] == "within noise"
    assert "statements: pg_stat_statements as each run left it (reset before the run)" in data["notes"]
    assert [f["statement"] for f in data["figures"] if f["key"].endswith("_mean") and "statement" in f] == [upd, "SELECT 1"]


def test_report_errors_are_one_line(tmp_path, capsys):
    folder = tmp_path / "exp"
    make_folder(folder, {"a": ["1", "2"]}, repeat=1)
    assert cli.main(["experiment", "report", str(folder), "--baseline", "a=3"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--baseline" in err
    victim = sorted((folder / "runs").iterdir())[0]
    with sqlite3.connect(victim) as c:
        c.execute("DELETE FROM ticks")  # a recording that holds no tick
    assert cli.main(["experiment", "report", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and victim.name in err
    victim.write_bytes(b"not a recording")
    assert cli.main(["experiment", "report", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_queryids_beyond_1e18_are_read(tmp_path):
    """pg_stat_statements' queryids use all 64 bits: a statement with one is a statement."""
    path = write_fixture(tmp_path / "r.pgio", n=20, incidents=False)
    with sqlite3.connect(path) as c:
        c.execute("UPDATE statements SET queryid = -8911997112549436027 WHERE queryid = 1000")
    with Recording(path) as rec:
        assert rec.statement_texts()[-8911997112549436027].startswith("UPDATE pgbench_accounts")
        assert rec.statement_totals()[-8911997112549436027]["calls"] > 0
        assert any(s["queryid"] == -8911997112549436027 for f in rec.frames() for s in f.statements)


def pgbench_log(logdir: Path) -> list[tuple[float, list[float]]]:
    """(first end time, latencies in ms) of each per-transaction log file pgbench wrote: lines
    `client transaction latency_us script epoch_s epoch_us [lag]`."""
    out = []
    for f in sorted(logdir.iterdir()):
        rows = [ln.split() for ln in f.read_text().splitlines() if ln.strip()]
        ok = [r for r in rows if r[2].isdigit()]  # failed/skipped transactions log a word there
        out.append((int(rows[0][4]) + int(rows[0][5]) / 1e6, [int(r[2]) / 1000 for r in ok]))
    return out


@pytest.mark.pg
def test_transaction_figures_equal_pgbench_log(make_cluster, tmp_path, capsys):
    """A real sweep (2 values × 2 repeats, 2 s runs) with pgbench's own per-transaction log kept: each
    run's latency mean, stddev, p50/p95/p99 and counts over 100-500 ms equal those of its log's
    transactions (percentiles within the histogram's 0.5 % buckets), its tps the one pgbench printed."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    logs = tmp_path / "logs"
    logs.mkdir()
    out = tmp_path / "exp"
    rc = cli.main(["experiment", "run", "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres",
                   "-d", "postgres", "--allow-settings", "--init-scale", "1", "--no-discard-first",
                   "--set", "backend_flush_after=0,256kB", "--repeat", "2", "-o", str(out), "--quiet",
                   "pgbench", "--", "-c", "2", "-T", "2", "-l", f"--log-prefix={logs}/tx"])
    assert rc == 0, capsys.readouterr().err
    data = json.loads(report(out, capsys, "--format", "json"))
    plan = json.loads((out / "experiment.json").read_text())
    files = pgbench_log(logs)
    checked = 0
    for row in data["rows"]:
        paths = [out / r["file"] for r in plan["runs"] if r["settings"] == row["settings"]]
        for got, path in zip(row["runs"], paths):
            with Recording(path) as rec:
                w = rec.workloads()[0]
                printed = [ln for _, s, ln in rec.workload_output(w["id"]) if ln.startswith("tps = ")]
            lat = next(lat for first, lat in files if w["start_t"] - 1 <= first <= w["stop_t"] + 1)
            assert got["tps"] == pytest.approx(float(printed[0].split()[2]), rel=1e-6)
            assert got["lat_mean"] == pytest.approx(statistics.fmean(lat), abs=0.0015)  # pgbench prints 3 decimals
            assert got["lat_stddev"] == pytest.approx(statistics.pstdev(lat), abs=0.0015, rel=1e-3)
            for p in (50, 95, 99):
                assert got[f"lat_p{p}"] == pytest.approx(statistics.quantiles(lat, n=100, method="inclusive")[p - 1], rel=0.01), p
            for ms in (100, 200, 300, 400, 500):
                assert got[f"over_{ms}"] == sum(x > ms for x in lat)
            checked += 1
        assert row["figures"]["lat_p99"]["mean"] == pytest.approx(statistics.fmean([r["lat_p99"] for r in row["runs"]]))
    assert checked == 4


def test_small_multiples_share_a_scale_that_one_spike_does_not_flatten():
    from pgio_tui.experiments.charts import robust_top
    assert robust_top([0.5, 1.0, 2.5]) == (3.0, False)  # every value fits
    top, cut = robust_top([1.0] * 500 + [650.0])  # one 650 ms await among 1 ms ones
    assert cut and 1.0 < top < 2.0
    assert robust_top([]) == (1.0, False)


def test_pgio_reads_and_sql_elapsed_come_from_the_workloads_own_summary(tmp_path, capsys):
    """pgio runs: RIOPS and CACHE_HITS/s as pgio reported them, hit ratio = hits / (hits + reads);
    sql runs: the mean of the timed executions. Other figures of such runs stay as they are."""
    folder = tmp_path / "exp"
    plan = make_folder(folder, {"shared_buffers": ["16MB", "64MB"]}, repeat=1)
    summaries = [("pgio", {"riops": 900.0, "cache_hits_s": 100.0}), ("sql", {"elapsed_ms": [1000.0, 3000.0]})]
    for run, (kind, summary) in zip(plan.runs, summaries):
        with sqlite3.connect(folder / run.file) as c:
            c.execute("UPDATE workloads SET kind = ?, summary = ?, params = ?",
                      (kind, json.dumps(summary), json.dumps({"sampling_rate": 0.05})))
    data = json.loads(report(folder, capsys, "--format", "json"))
    pgio, sql = (row["runs"][0] for row in data["rows"])
    assert (pgio["pgio_riops"], pgio["pgio_hits_s"], pgio["pgio_hit_ratio"]) == (900.0, 100.0, 10.0)
    assert pgio["sql_elapsed"] is None and sql["pgio_riops"] is None
    assert sql["sql_elapsed"] == 2.0
    assert any("0.05 sample" in n for n in data["notes"])  # counts over 100-500 ms of a sample say so
    # latency of pgio and sql runs is not of transactions, and the report says what it is of
    assert any("of pgio's statements" in n for n in data["notes"])
    assert any("of the statement's executions" in n for n in data["notes"])
    assert {"pgio_riops", "pgio_hit_ratio", "sql_elapsed"} <= {f["key"] for f in data["figures"]}


def test_figures_are_found_by_metric_and_statistic(tmp_path):
    """Every figure names a statistic the summary has, by (metric, stat): a typo is a figure that is
    always "—". A statistic's (metric, stat) is unique in its summary. The fixture has no latency
    histograms (so no percentile of transactions) and no pgio workload."""
    from collections import Counter

    from pgio_tui import metrics as M
    from pgio_tui.analysis.summary import summarize
    from pgio_tui.experiments.figures import FIGURES, run_figures, run_window
    from pgio_tui.store.reader import Recording

    path = write_fixture(tmp_path / "r.pgio", n=60, incidents=False)
    with Recording(path) as rec:
        s = summarize(rec, run_window(rec))
    assert [k for k, n in Counter(st.id for st in s.stats).items() if n > 1] == []
    values = run_figures(path).values
    missing = {f.key for f in FIGURES if f.of is not None and values[f.key] is None}
    assert missing == {"lat_p50", "lat_p95", "lat_p99", "pgio_riops", "pgio_hits_s", "pgio_tuples_s",
                       *(f"log_over_{ms}" for ms in M.LATENCY_THRESHOLDS_MS)}  # no server log counts either
    # every other statistic of the recording is a figure too, named by catalog key and statistic
    figs = run_figures(path)
    named = {f.name for f in FIGURES} | {f.name for f in figs.more}
    for st in s.stats:
        metric, stat = st.id
        if st.value is None or not stat or st.group in ("statements", "backends") and metric not in M.BY_NAME:
            continue
        if metric.startswith(M.DISK_PREFIX):
            dev = metric.split(".")[1]
            role = next((r for r, d in s.role_devices.items() if d == dev), None)
            if role is None:
                continue
            metric = M.disk(role, metric.rsplit(".", 1)[1])
        assert f"{metric}:{stat}" in named, (st.group, st.name)
    assert all(figs.values[f.key] is not None for f in figs.more)
    assert values["pgdata_util"] == s.find(M.disk("nvme0n1", M.DISK_UTIL_PCT), "mean").value \
        == s.value("devices", "PGDATA util mean")



def test_folders_reported_as_one_grid(tmp_path, capsys):
    """Two folders that differ in the workload's scale (pgbench -i -s 1 and 10), the same setting
    swept: one report, pgbench.scale a dimension, each row's figures those of its folder's report;
    the two dimensions make a heat map. Folders that are not one grid are refused in one line."""
    a, b = tmp_path / "s1", tmp_path / "s10"
    make_folder(a, {"shared_buffers": ["64MB", "128MB"]})
    make_folder(b, {"shared_buffers": ["64MB", "128MB"]})
    data = json.loads((b / "experiment.json").read_text())
    data["workload"]["init_scale"] = 10
    (b / "experiment.json").write_text(json.dumps(data))
    one = [json.loads(report(f, capsys, "--format", "json")) for f in (a, b)]
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(a), str(b), "--format", "json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert [r["settings"] for r in both["rows"]] == [
        {"pgbench.scale": s, "shared_buffers": sb} for s in ("1", "10") for sb in ("64MB", "128MB")]
    assert both["baseline"] == {"pgbench.scale": "1", "shared_buffers": "64MB"}
    for merged, alone in zip(both["rows"], one[0]["rows"] + one[1]["rows"]):
        assert merged["runs"] == alone["runs"] and merged["figures"]["tps"]["mean"] == alone["figures"]["tps"]["mean"]
    out = tmp_path / "grid.html"
    assert cli.main(["experiment", "report", str(a), str(b), "-o", str(out)]) == 0
    assert re.findall(r'<svg class="heat"[^>]*aria-label="tps', out.read_text())
    make_folder(tmp_path / "other", {"work_mem": ["4MB", "8MB"]})
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(a), str(tmp_path / "other")]) == 1
    assert "not one grid" in capsys.readouterr().err


def test_figures_picked_are_rows_charts_and_heat_maps(grid, tmp_path, capsys):
    """--figures GLOB: only those rows, in every format; in the HTML each one's metric over time per
    run (the device's by its role) and a heat map of the grid; a glob that matches nothing: one line."""
    table = report(grid, capsys, "--figures", "disk.PGDATA.w_await_ms:*", "--figures", "wal.*")
    body = table.split("\n\n")[0].splitlines()[1:]
    assert body and all(ln.startswith(("PGDATA w_await", "devices: PGDATA w_await p95", "wal: ")) for ln in body)
    rows = list(csv.reader(io.StringIO(report(grid, capsys, "--figures", "wal.*", "--format", "csv"))))
    assert {r[10] for r in rows[1:]} and all(r[10].startswith("wal.") for r in rows[1:])
    out = tmp_path / "picked.html"
    assert cli.main(["experiment", "report", str(grid), "--figures", "disk.PGDATA.w_await_ms:*", "-o", str(out)]) == 0
    page = out.read_text()
    picked = page.split("The figures asked for, over time per run", 1)[1].split("<h2>", 1)[0]
    assert picked.count('<svg class="mini"') == 2 * 12  # one chart per run of each (mean and p95: one metric)
    heats = re.findall(r'<svg class="heat"[^>]*aria-label="([^"]*)"', page)
    assert heats == ["PGDATA w_await, mean of repeats", "devices: PGDATA w_await p95, mean of repeats"]
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(grid), "--figures", "no.such*"]) == 1
    assert "no figure of this experiment matches" in capsys.readouterr().err
