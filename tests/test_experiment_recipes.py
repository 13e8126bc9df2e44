"""The recipes of docs/experiments.md, run end to end at toy sizes on a throwaway cluster.

Each recipe is the documented command (checked to be in the docs word for word) and a toy version
of it: the same settings swept and the same workload, two or three values, two repeats, runs of
two seconds, on this module's cluster with --allow-settings (so that the server can be asked
afterwards whether it has its own settings back). Each checks: every run done; every recording
holds its run's value of every swept setting; the settings restored on the server; the results
table printed at the end has one row per figure and combination with n = 2, the baseline marked;
stderr has the line of every finished run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pgio_tui import cli
from pgio_tui.analysis.settings_diff import same_setting
from pgio_tui.store.reader import Recording
from pgio_tui.workloads.cluster import Cluster

DOCS = Path(__file__).resolve().parents[1] / "docs" / "experiments.md"
pytestmark = pytest.mark.pg


@pytest.fixture(scope="module")
def cluster(pg_bindir):
    """One cluster for the recipes: each puts back what it changed, which the next one checks."""
    with Cluster(bindir=pg_bindir, name="recipes") as c:
        with c.connect() as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")  # as the --lab cluster has it
        yield c


def conn_args(c: Cluster) -> list[str]:
    return ["-h", str(c.sockdir), "-p", str(c.port), "-U", "postgres", "-d", "postgres"]


def server(c: Cluster, names: list[str]) -> dict[str, tuple[str, int]]:
    """name -> (current value, number of postgresql.auto.conf entries), on a new connection."""
    out = {}
    with c.connect() as conn:
        for n in names:
            value = conn.execute("select current_setting(%s)", [n]).fetchone()[0]
            auto = conn.execute("select count(*) from pg_file_settings where name = %s and "
                                "sourcefile like '%%postgresql.auto.conf'", [n]).fetchone()[0]
            out[n] = (value, auto)
    return out


def doc_command(name: str) -> str:
    """The recipe's command as docs/experiments.md has it (continuation lines joined)."""
    text = DOCS.read_text().split("## Recipes", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n\s*(pgio-tui experiment run .*?)```", text, re.S)
    joined = [" ".join(line.strip().rstrip("\\").strip() for line in b.strip().splitlines()) for b in blocks]
    found = [j for j in joined if f"-o {name} " in j]
    assert len(found) == 1, f"recipe -o {name} is not in docs/experiments.md once"
    return found[0]


def run_recipe(cluster, tmp_path, capsys, name: str, toy: list[str], workload: list[str],
               headline: str = "tps") -> dict:
    """Run the toy version; check what every recipe must show; return the plan and report.
    `headline`: the figure whose rows the table check counts (tps; statement elapsed for sql)."""
    out = tmp_path / name
    argv = ["experiment", "run", *conn_args(cluster), "--allow-settings", *toy, "--repeat", "2", "-o", str(out),
            *workload]
    sweep = {}
    for i, word in enumerate(toy):
        if word == "--set":
            n, _, vals = toy[i + 1].partition("=")
            sweep[n] = vals.split(",")
    guc_names = [n for n in sweep if not n.startswith("os.")]  # os.page_cache is the OS's, not a GUC
    before = server(cluster, guc_names)
    rc = cli.main(argv)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    plan = json.loads((out / "experiment.json").read_text())
    combos = 1
    for vals in sweep.values():
        combos *= len(vals)
    assert len(plan["runs"]) == 2 * combos
    assert all(r["state"] == "done" for r in plan["runs"]) and plan["restored"] is True
    for r in plan["runs"]:  # applied (read back before the run) and recorded (in the run's own file)
        with Recording(out / r["file"]) as rec:
            recorded = rec.settings()
        for n, v in r["settings"].items():
            if n == "os.page_cache":  # the cap the runner set, as it read it back from the cgroup
                from pgio_tui.experiments.page_cache import parse_size
                assert r["page_cache"]["page_cache_bytes"] == parse_size(v), r["page_cache"]
                continue
            assert same_setting(v, r["applied"][n]), (n, v, r["applied"])
            s = recorded[n]
            assert same_setting(v, s.value, s.unit), (n, v, s.value, s.unit)
    assert server(cluster, guc_names) == before  # restored: the same values, no ALTER SYSTEM left
    # the end of the output: the results table, a row per figure and combination, n = 2
    table = captured.out[captured.out.index("figure"):].splitlines()
    head = table[0].split()
    assert head[:4] == ["figure", "unit", "settings", "n"] and head[-1] == "verdict"
    labels = [" ".join(f"{n}={v}" for n, v in zip(sweep, vals) if len(sweep[n]) > 1)  # fixed ones: in the plan
              for vals in _product(list(sweep.values()))]
    tps = [line for line in table if line.startswith(headline + " ")]
    assert len(tps) == combos and [any(lb in line for line in tps) for lb in labels] == [True] * combos
    assert all(re.search(r"\s2\s", line) for line in tps)  # n = 2 repeats in every row
    assert sum("baseline" in line for line in tps) == 1
    for i in range(1, 2 * combos + 1):
        assert re.search(rf"experiment: run {i}/{2 * combos} done: ", captured.err), captured.err
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    return {"plan": plan, "report": report, "out": out, "sweep": sweep}


def _product(lists: list[list[str]]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for vals in lists:
        out = [o + [v] for o in out for v in vals]
    return out


def test_backend_flush_after(cluster, tmp_path, capsys):
    assert "--set backend_flush_after=0,512kB,2MB --repeat 3" in doc_command("bfa")
    got = run_recipe(cluster, tmp_path, capsys, "bfa",
                     ["--init-scale", "1", "--set", "backend_flush_after=0,512kB,2MB"],
                     ["pgbench", "--", "-c", "2", "-T", "2", "-M", "prepared", "--random-seed=5432"])
    # the per-statement table of the article: pgbench's UPDATE of pgbench_accounts, mean and stddev
    rows = got["report"]["rows"]
    assert [r["settings"]["backend_flush_after"] for r in rows] == ["0", "512kB", "2MB"]
    update = [f for f in got["report"]["figures"] if "UPDATE pgbench_accounts" in f.get("statement", "")]
    assert {f["label"].rsplit(" ", 1)[-1] for f in update} >= {"mean", "stddev"}, got["report"]["figures"]


def test_checkpoint_completion_target(cluster, tmp_path, capsys):
    cmd = doc_command("cct")
    assert "--set checkpoint_completion_target=0,0.3,0.6,0.9,1" in cmd and "--set checkpoint_timeout=30s" in cmd
    assert "--set log_min_duration_statement=100ms" in cmd
    got = run_recipe(cluster, tmp_path, capsys, "cct",
                     ["--init-scale", "1", "--no-discard-first", "--set", "checkpoint_completion_target=0,0.6,1",
                      "--set", "checkpoint_timeout=5min", "--set", "log_min_duration_statement=0"],
                     ["pgbench", "--", "-c", "2", "-T", "2"])
    rows = got["report"]["rows"]
    assert [r["settings"] for r in rows] == [{"checkpoint_completion_target": v, "checkpoint_timeout": "5min",
                                              "log_min_duration_statement": "0"} for v in ("0", "0.6", "1")]
    # the article's table: statements from the server log over 100-500 ms, beside pgbench's transactions
    names = {f["key"]: f for f in got["report"]["figures"]}
    for ms in (100, 200, 300, 400, 500):
        log, txn = names[f"log_over_{ms}"], names[f"over_{ms}"]
        assert log["name"] == f"statements.log_over_{ms}ms:total" and "server log" in log["label"]
        assert txn["name"] == f"latency.over_{ms}ms:total" and "transactions" in txn["label"]
        assert all(r["figures"][f"log_over_{ms}"]["n"] == 2 for r in rows)


def test_bgwriter_study(cluster, tmp_path, capsys):
    assert "--set bgwriter_lru_maxpages=0,100,10000" in doc_command("bgw")
    got = run_recipe(cluster, tmp_path, capsys, "bgw",
                     ["--init-scale", "1", "--no-discard-first", "--set", "bgwriter_lru_maxpages=0,1000",
                      "--set", "bgwriter_delay=100ms"],
                     ["pgbench", "--", "-c", "2", "-T", "2"])
    figures = got["report"]["rows"][0]["figures"]
    for source in ("checkpointer", "bgwriter", "backend"):  # buffers written by source, as the study looked at
        assert any(source in k for k in figures), source
    # wait events: the client backends' samples, shares per type adding up to 100 % in every run
    for row in got["report"]["rows"]:
        for run in row["runs"]:
            types = [v for k, v in run.items() if k.startswith("waits.") and k.count(".") == 1 and v is not None]
            assert types and sum(types) == pytest.approx(100.0)
    out = got["out"] / "r.html"
    assert cli.main(["experiment", "report", str(got["out"]), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.count('aria-label="buffers written"') == 4 and "Runs" in page  # per run, stacked over time


def test_fsync_by_synchronous_commit(cluster, tmp_path, capsys):
    cmd = doc_command("fsync")
    assert "--set fsync=on,off --set synchronous_commit=on,off" in cmd and " sql 'INSERT INTO t SELECT" in cmd
    got = run_recipe(cluster, tmp_path, capsys, "fsync",
                     ["--no-discard-first", "--set", "fsync=on,off", "--set", "synchronous_commit=on,off"],
                     ["sql", "INSERT INTO t SELECT generate_series(1, 20000), md5(random()::text), "
                             "trunc(random()*10000000)",
                      "--before", "CREATE TABLE IF NOT EXISTS t (a int, b text, c int); TRUNCATE t"],
                     headline="statement elapsed")
    rows = got["report"]["rows"]
    assert [(r["settings"]["fsync"], r["settings"]["synchronous_commit"]) for r in rows] == [
        ("on", "on"), ("on", "off"), ("off", "on"), ("off", "off")]
    for r in rows:  # the figure is the statement's elapsed time, one per run, from the workload's own timing
        el = r["figures"]["sql_elapsed"]
        assert el["n"] == 2 and 0 < el["mean"] < 60
        for run in r["runs"]:
            assert run["sql_elapsed"] > 0
    with cluster.connect() as conn:
        assert conn.execute("select count(*) from t").fetchone()[0] == 20000  # the last run's INSERT


def test_shared_buffers_by_page_cache(cluster, tmp_path, capsys):
    from pgio_tui.experiments import page_cache as pc
    cmd = doc_command("sb")
    assert "--set shared_buffers=50MB,100MB,200MB,300MB --set os.page_cache=" in cmd and " pgio --scale 150M" in cmd
    try:
        pc.hierarchy()
    except pc.PageCacheError as exc:
        pytest.skip(f"os.page_cache needs a cgroup memory controller: {exc}")
    got = run_recipe(cluster, tmp_path, capsys, "sb",
                     ["--no-discard-first", "--allow-restart", "--restart-warmup", "1", "--set",
                      "shared_buffers=16MB,32MB", "--set", "os.page_cache=8MB,256MB"],
                     ["pgio", "--scale", "32M", "--run-time", "2", "--sessions", "1"])
    rows = got["report"]["rows"]
    assert [(r["settings"]["shared_buffers"], r["settings"]["os.page_cache"]) for r in rows] == [
        ("16MB", "8MB"), ("16MB", "256MB"), ("32MB", "8MB"), ("32MB", "256MB")]
    for r in rows:  # pgio's own figures: read IOPS and the rows its statements fetched, per run
        assert r["figures"]["pgio_riops"]["n"] == 2 and r["figures"]["pgio_riops"]["mean"] > 0
        assert r["figures"]["pgio_tuples_s"]["n"] == 2 and r["figures"]["pgio_tuples_s"]["mean"] > 0
    restarted = [run for run in got["plan"]["runs"] if run["warmup"].get("after_restart")]
    assert restarted and all(run["warmup"]["s"] == 1 for run in restarted)  # shared_buffers changed: warmed up
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(got["out"]), "--format", "html"]) == 0
    page = capsys.readouterr().out  # the article's two heat maps: tuples/s and blks_read/s
    assert "pgio tuples/s, mean of repeats" in page and "blks_read/s (all databases), mean of repeats" in page
    for run in got["plan"]["runs"]:
        assert not Path(run["page_cache"]["cgroup"]).exists()  # the cap is lifted at the end
