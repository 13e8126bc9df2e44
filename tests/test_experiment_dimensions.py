"""Workload options as dimensions of an experiment: `--set pgbench.clients=…`, `pgbench.scale=…`
(set up again per value), `pgio.update_pct=…`, mixed with server settings; what each run ran is
what its recording says."""

from __future__ import annotations

import json

import pytest

from pgio_tui import cli
from pgio_tui.experiments.plan import Plan, PlanError
from pgio_tui.experiments.workloads import for_run, parse, setup_key
from pgio_tui.store.reader import Recording


def test_for_run_puts_the_options_in():
    spec = parse("pgbench", ["-c", "2", "--client=3", "-T", "5", "-j2"], 5)
    run = for_run(spec, {"pgbench.clients": "8", "pgbench.jobs": "4", "pgbench.scale": "10", "work_mem": "4MB"})
    assert run["args"] == ["-T", "5", "-c", "8", "-j", "4"] and run["init_scale"] == 10
    assert spec["args"] == ["-c", "2", "--client=3", "-T", "5", "-j2"] and spec["init_scale"] == 5  # the plan's kept
    assert setup_key(run) != setup_key(spec) and for_run(spec, {"work_mem": "4MB"}) is spec
    pgio = parse("pgio", ["--scale", "16M", "--update-pct", "0"], None)
    config = for_run(pgio, {"pgio.update_pct": "50", "pgio.scale": "32M"})["config"]
    assert (config["update_pct"], config["scale"]) == (50, 4096) and pgio["config"]["update_pct"] == 0


@pytest.mark.parametrize("kind, words, sweep, says", [
    ("pgbench", ["-T", "5"], {"pgbench.clientz": ["1", "2"]}, "the workload options are"),
    ("pgbench", ["-T", "5"], {"pgio.update_pct": ["0", "50"]}, "an option of pgio, and the workload is pgbench"),
    ("pgbench", ["-T", "5"], {"pgbench.clients": ["0", "2"]}, "a whole number from 1"),
    ("pgio", [], {"pgio.update_pct": ["0", "70"]}, "pgio allows 0, 1-50 or 100"),
])
def test_bad_options_are_refused_before_anything_runs(kind, words, sweep, says):
    plan = Plan(sweep=sweep, repeat=1, order="interleaved", workload=parse(kind, words, None), target={})
    with pytest.raises(PlanError, match=says):
        plan.check()


@pytest.mark.pg
def test_clients_and_scale_swept_with_a_setting(make_cluster, tmp_path, capsys):
    cluster = make_cluster()
    out = tmp_path / "dims"
    rc = cli.main(["experiment", "run", "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres",
                   "-d", "postgres", "--allow-settings", "--init-scale", "1", "--no-discard-first",
                   "--set", "pgbench.clients=1,3", "--set", "pgbench.scale=1,2", "--set", "work_mem=4MB",
                   "--repeat", "1", "-o", str(out), "--quiet", "pgbench", "--", "-c", "2", "-T", "2"])
    assert rc == 0, capsys.readouterr().err
    plan = json.loads((out / "experiment.json").read_text())
    assert len(plan["runs"]) == 4 and all(r["state"] == "done" for r in plan["runs"])
    for r in plan["runs"]:
        assert r["applied"] == {"work_mem": "4MB"}  # the workload's options are not the server's
        with Recording(out / r["file"]) as rec:
            w = rec.workloads()[0]
        argv = w["argv"] if isinstance(w["argv"], list) else json.loads(w["argv"])
        assert argv[argv.index("-c") + 1] == r["settings"]["pgbench.clients"], argv
        summary = w["summary"] if isinstance(w["summary"], dict) else {}
        scale = summary.get("scale") or summary.get("scaling_factor")
        assert scale is None or int(scale) == int(r["settings"]["pgbench.scale"]), summary
    with cluster.connect() as conn:  # the last run's scale is the one set up last
        n = conn.execute("select count(*) from pgbench_branches").fetchone()[0]
    assert n == int(plan["runs"][-1]["settings"]["pgbench.scale"])
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(out), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["label"] for r in rows] == ["pgbench.clients=1 pgbench.scale=1", "pgbench.clients=1 pgbench.scale=2",
                                          "pgbench.clients=3 pgbench.scale=1", "pgbench.clients=3 pgbench.scale=2"]


@pytest.mark.pg
def test_repeat_auto_adds_rounds_until_settled_or_out_of_repeats(make_cluster, tmp_path, capsys):
    """--repeat auto --max-repeat 3 on 2 s runs: two interleaved rounds, then a third when a headline
    verdict is open (2 s of pgbench cannot see 10 %), and it stops there, saying why."""
    cluster = make_cluster()
    out = tmp_path / "auto"
    rc = cli.main(["experiment", "run", "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres",
                   "-d", "postgres", "--allow-settings", "--init-scale", "1", "--no-discard-first",
                   "--set", "bgwriter_delay=10ms,200ms", "--repeat", "auto", "--max-repeat", "3", "-o", str(out),
                   "--quiet", "pgbench", "--", "-c", "2", "-T", "2"])
    err = capsys.readouterr().err
    assert rc == 0, err
    plan = json.loads((out / "experiment.json").read_text())
    assert plan["auto"] == {"max_repeat": 3, "budget_s": None}
    order = [(r["settings"]["bgwriter_delay"], r["repeat"]) for r in plan["runs"]]
    if "auto: settled at 2 repeats" in err:
        assert order == [("10ms", 1), ("200ms", 1), ("10ms", 2), ("200ms", 2)]
    else:
        assert "one more repeat" in err and "repeat auto: " in err and plan["repeat"] == 3
        assert order == [("10ms", 1), ("200ms", 1), ("10ms", 2), ("200ms", 2), ("10ms", 3), ("200ms", 3)]
        assert ("auto: settled at 3 repeats" in err) != ("the repeats ran out" in err)
    assert all(r["state"] == "done" for r in plan["runs"]) and plan["restored"] is True
