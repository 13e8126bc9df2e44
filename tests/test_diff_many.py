"""N-way `diff` and `report`, and `info DIR`, on the known recordings of test_diff_fixtures.py:
A (backend_flush_after 0), B (2MB) and A′ (A recorded again), as files and as an experiment
folder. Every column of an N-way diff must be the two-way diff of the baseline and that run."""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from test_diff_fixtures import write_run

from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.compare import compare_files
from pgio_tui.analysis.settings_diff import SettingChange
from pgio_tui.cli import main
from pgio_tui.experiments.plan import Plan, save


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    d = tmp_path_factory.mktemp("many")
    return write_run(d / "a.pgio", "A"), write_run(d / "b.pgio", "B"), write_run(d / "a2.pgio", "A")


@pytest.fixture(scope="module")
def folder(three, tmp_path_factory):
    """An experiment folder: backend_flush_after 0,2MB × 2 repeats, interleaved, the fourth run
    interrupted (so three are done: A, B, A′ in run order)."""
    d = tmp_path_factory.mktemp("exp")
    plan = Plan(sweep={"backend_flush_after": ["0", "2MB"]}, repeat=2, order="interleaved",
                workload={"kind": "pgbench", "args": ["-c", "4", "-T", "30"], "init_scale": 1},
                target={"lab": True, "pg_version": None})
    plan.make_runs()
    (d / "runs").mkdir()
    for run, src, state in zip(plan.runs, (*three, None), ("done", "done", "done", "interrupted")):
        run.file = plan.run_file(run)
        run.state = state
        if src is not None:
            shutil.copy(src, d / run.file)
    plan.runs[3].note = "stopped by the user"
    plan.runs[2].flags = [{"kind": "autovacuum", "text": "autovacuum of pgbench_accounts ran during the run"},
                          {"kind": "dirty_at_start", "text": "Dirty was 1.2 GiB at the start\x1b[31m"}]
    plan.restored = True
    save(plan, d)
    return d


def test_each_column_is_the_two_way_diff(three):
    a, b, a2 = three
    c = compare_files([a, b, a2], align="workload")
    ab, aa = compare(a, b, "workload"), compare(a, a2, "workload")
    assert c.letters == ["A", "B", "C"] and c.labels == ["a.pgio", "b.pgio", "a2.pgio"]
    assert len(c.rows) == len(ab.rows)
    for two, col in ((ab, 1), (aa, 2)):
        for r2 in two.rows:
            r = c.row(r2.group, r2.name)
            assert r is not None, (r2.group, r2.name)
            assert r.values[0] == r2.a and r.values[col] == r2.b
            assert r.change_pct_of(col) == r2.change_pct and r.verdict_of(col) == r2.verdict
            j, j2 = r.judgement_of(col), r2.judgement
            assert replace(j, why="") == replace(j2, why="")  # the same verdict, its run named as in the table
            assert j.why == j2.why.replace(" B ", f" {c.letters[col]} ")
    assert c.row("latency", "tps").values == [100, 120, 100]
    assert c.row("writes", "backend").verdict_of(1) == "changed"
    assert c.row("writes", "backend").change_pct_of(2) == 0  # A vs A: no change
    # the settings that differ, per run: only B's backend_flush_after and machine
    assert SettingChange("postgres", "backend_flush_after", "0", "2MB", "0") in c.settings
    assert SettingChange("machine", "host", "lab-a", "lab-b", "lab-a") in c.machine


def test_the_baseline_is_chosen_and_becomes_a(three, capsys):
    a, b, a2 = three
    for choice in (str(b), "b.pgio", "backend_flush_after=2MB", "backend_flush_after=256 × 8kB".replace(" × 8kB", "")):
        if choice.endswith("=256"):
            continue  # a value is given as the server takes it (2MB), not in pages
        assert main(["diff", str(a), str(b), str(a2), "--format", "json", "--baseline", choice]) == 0
        out = json.loads(capsys.readouterr().out)
        assert [r["path"] for r in out["runs"]] == [str(b), str(a), str(a2)], choice
        assert out["baseline"] == "A" and out["runs"][0]["baseline"] is True
        tps = next(r for r in out["rows"] if r["group"] == "latency" and r["name"] == "tps")
        assert [v["value"] for v in tps["values"]] == [120, 100, 100]
        assert tps["values"][1]["change_pct"] == pytest.approx(100 * (100 / 120 - 1))
    ba = compare(b, a, "workload")  # B as the baseline: A's column is `diff B A`
    out_row = next(r for r in out["rows"] if r["name"] == "backend")
    assert out_row["values"][1]["verdict"] == ba.row("writes", "backend").verdict == "changed"


def test_formats(three, capsys):
    a, b, a2 = three
    args = ["diff", str(a), str(b), str(a2)]
    assert main([*args, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    c = compare_files([a, b, a2], align="auto")
    stats = [r for r in rows if not r["group"].startswith(("setting", "machine"))]
    assert len(stats) == 3 * len(c.rows)
    tps = [r for r in stats if r["name"] == "tps"]
    assert [(r["run"], r["baseline"], r["value"], r["change_pct"], r["verdict"]) for r in tps] == [
        ("A", "yes", "100.0", "", ""), ("B", "", "120.0", "20.0", "changed"), ("C", "", "100.0", "0.0", "noise")]
    assert {(r["run"], r["value"]) for r in rows if r["name"] == "backend_flush_after"} == {
        ("A", "0"), ("B", "2MB"), ("C", "0")}
    assert main([*args, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# pgio-tui diff: 3 runs against A")
    assert "| metric | unit | A | B | C |" in md and "| tps | 1/s | 100.0 | 120.0 (+20.0 %*) | 100.0 (+0.0 %) |" in md
    assert main(args) == 0  # N runs: the table, never the diff screen
    table = capsys.readouterr().out
    assert "3 runs against A" in table and "120.0 (+20.0 %*)" in table and "* changed" in table


def test_errors_are_one_line(three, tmp_path, capsys):
    a, b, _ = three
    for argv, says in ((["diff", str(a), "--format", "csv"], "two or more recordings"),
                       (["diff", str(a), str(tmp_path / "nope.pgio")], "no such file"),
                       (["diff", str(a), str(b), "--baseline", "shared_buffers=1GB"], "no recording compared has"),
                       (["diff", str(a), str(b), "--baseline", "whatever"], "give a FILE among"),
                       (["diff", str(a), str(b), "--baseline", str(tmp_path)], "not one of the recordings"),
                       (["diff", str(tmp_path), str(a)], "without experiment.json")):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_an_experiment_folder(folder, capsys):
    assert main(["diff", str(folder), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in out["runs"]] == ["backend_flush_after=0 r1", "backend_flush_after=2MB r1",
                                                 "backend_flush_after=0 r2"]  # the interrupted run left out
    assert main(["diff", str(folder), "--format", "json", "--baseline", "backend_flush_after=2MB"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0]["label"] == "backend_flush_after=2MB r1"
    assert main(["diff", str(folder), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "| A (baseline) | backend_flush_after=0 r1 |" in text
    assert "| metric | unit | A: 0 r1 | B: 2MB r1 | C: 0 r2 |" in text  # columns named by the setting that differs
    assert main(["diff", str(folder), "--format", "table"]) == 0
    text = capsys.readouterr().out
    assert "002-backend_flush_after=2MB-r1.pgio" in text and "_af…" not in text  # run names whole
    assert "no verdict" not in text and "?AB" in text  # a short code, said in the legend
    assert max(map(len, text.splitlines())) <= 200
    assert "29 s from the workload start (ticks 2-31)" in text  # the runs table not wrapped


def test_report_of_n_and_of_a_folder(three, folder, tmp_path, capsys):
    out = tmp_path / "n.html"
    assert main(["report", *map(str, three), "-o", str(out), "--baseline", "b.pgio"]) == 0
    html = out.read_text()
    assert "comparison of 3 runs against b.pgio" in html
    assert html.count("<details open><summary>A:") == 1 and html.count('<svg class="cdf"') == 1  # one CDF
    assert html.count("<details><summary>All settings of") == 3 and html.count("<details><summary>") == 5
    assert "<td class=\"n\"><b>100.0 (-16.7 %*)</b></td>" in html  # A's tps against B: changed
    assert "<td>backend_flush_after</td><td>postgres</td><td>2MB</td><td>0</td><td>0</td>" in html
    assert "<script>" in html and "http" not in html.replace("http://www.w3.org", "")
    out = tmp_path / "dir.html"  # a folder and --baseline FILE: its runs against that one
    assert main(["report", str(folder), "-o", str(out), "--baseline", "001-backend_flush_after=0-r1.pgio"]) == 0
    assert "comparison of 3 runs against backend_flush_after=0 r1" in out.read_text()
    out = tmp_path / "exp.html"  # a folder alone: the experiment's own report, per setting value
    assert main(["report", str(folder), "-o", str(out), "--baseline", "backend_flush_after=2MB"]) == 0
    html = out.read_text()
    assert "backend_flush_after=2MB" in html and "comparison of" not in html and "<svg" in html


def test_info_lists_an_experiment(folder, capsys):
    assert main(["info", str(folder)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert "sweep       backend_flush_after=0,2MB" in text
    assert "runs        4: 2 combination(s) × 2 repeat(s), interleaved" in text
    assert "3 of 4 runs done, 1 interrupted; settings restored" in text
    head = next(i for i, ln in enumerate(lines) if ln.startswith("#"))
    assert lines[head].split() == ["#", "settings", "repeat", "state", "flags", "duration", "recording"]
    runs = [ln.split() for ln in lines[head + 1:head + 5]]
    assert [r[:4] for r in runs] == [["1", "backend_flush_after=0", "1", "done"],
                                     ["2", "backend_flush_after=2MB", "1", "done"],
                                     ["3", "backend_flush_after=0", "2", "done"],
                                     ["4", "backend_flush_after=2MB", "2", "interrupted"]]
    assert runs[0][5] == "0:37" and runs[1][5] == "0:34"  # the recordings' first to last tick (A 38, B 35 ticks)
    assert runs[0][6] == "runs/001-backend_flush_after=0-r1.pgio"
    assert runs[3][5] == "missing"  # its recording was never written
    assert "run 4: stopped by the user" in text
    assert runs[2][4] == "autovacuum," and runs[2][5] == "dirty_at_start"  # the kinds in the table
    assert "run 3: autovacuum of pgbench_accounts ran during the run" in text  # the texts below it
    assert "\x1b" not in text and "Dirty was 1.2 GiB at the start" in text
    assert main(["info", str(Path(folder) / "runs")]) == 1
    assert "is it an experiment folder" in capsys.readouterr().err


@pytest.mark.parametrize("given,value,unit,same", [
    ("512kB", "64", "8kB", True), ("2MB", "256", "8kB", True), ("1GB", "131072", "8kB", True),
    ("5min", "300", "s", True), ("300s", "300", "s", True), ("100ms", "100", "ms", True),
    ("200", "200", "ms", True),  # a bare number is in the setting's own unit, as ALTER SYSTEM reads it
    ("0", "0", "8kB", True), ("0.3", "0.3", "", True), ("on", "on", "", True),
    ("512kB", "65", "8kB", False), ("5min", "301", "s", False), ("off", "on", "", False), ("200", "100", "ms", False),
    ("1MB", "1", "s", False),  # a size is never a time
])
def test_a_setting_written_as_alter_system_takes_it(given, value, unit, same):
    from pgio_tui.analysis.settings_diff import same_setting
    assert same_setting(given, value, unit) is same
