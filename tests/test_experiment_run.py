"""`experiment run/resume/report` end to end on real throwaway clusters at toy sizes (pgbench scale
1, two values, two repeats, 3 s runs): the table's shape, the settings each recording saw, the
originals back afterwards, and Ctrl-C mid-run then `resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgio_tui import cli
from pgio_tui.store.reader import Recording

ROOT = Path(__file__).resolve().parents[1]


def conn_args(cluster) -> list[str]:
    return ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]


def server_setting(cluster, name: str) -> tuple[str, list[str]]:
    """(current value, postgresql.auto.conf entries) on a new connection."""
    with cluster.connect() as conn:
        value = conn.execute("select current_setting(%s)", [name]).fetchone()[0]
        auto = [r[0] for r in conn.execute("select setting from pg_file_settings where name = %s and "
                                           "sourcefile like '%%postgresql.auto.conf'", [name])]
    return value, auto


def recorded(path: Path, name: str) -> tuple[str, str | None]:
    with Recording(path) as rec:
        s = rec.settings()[name]
        return str(s.value), s.unit


def test_sweep_applies_records_and_restores(make_cluster, tmp_path, capsys):
    """backend_flush_after 64kB/256kB × 2 interleaved on a 'user' server (--allow-settings): every
    recording holds the value of its run, the server is back to its default afterwards, and the
    report has one row per value with two repeats, an interval and a verdict against the baseline."""
    cluster = make_cluster()
    out = tmp_path / "exp"
    rc = cli.main(["experiment", "run", *conn_args(cluster), "--allow-settings", "--init-scale", "1",
                   "--set", "backend_flush_after=64kB,256kB", "--repeat", "2", "-o", str(out), "--quiet",
                   "pgbench", "--", "-c", "2", "-T", "3"])
    assert rc == 0, capsys.readouterr().err
    plan = json.loads((out / "experiment.json").read_text())
    assert [r["settings"]["backend_flush_after"] for r in plan["runs"]] == ["64kB", "256kB", "64kB", "256kB"]
    assert all(r["state"] == "done" for r in plan["runs"]) and plan["restored"] is True
    assert plan["originals"]["backend_flush_after"]["auto_conf"] is None
    for r in plan["runs"]:
        assert r["applied"] == r["settings"]  # read back from the server before the run
        value, unit = recorded(out / r["file"], "backend_flush_after")
        assert unit == "8kB" and int(value) * 8 == int(r["settings"]["backend_flush_after"].removesuffix("kB"))
    assert server_setting(cluster, "backend_flush_after") == ("0", [])  # the default again, no ALTER SYSTEM left
    assert sorted(p.name for p in (out / "runs").iterdir()) == [Path(r["file"]).name for r in plan["runs"]]
    capsys.readouterr()

    assert cli.main(["experiment", "report", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["baseline"] == {"backend_flush_after": "64kB"}
    assert [r["settings"] for r in report["rows"]] == [{"backend_flush_after": "64kB"},
                                                      {"backend_flush_after": "256kB"}]
    for row in report["rows"]:
        tps, p99 = row["figures"]["tps"], row["figures"]["lat_p99"]
        assert row["repeats"] == 2 and tps["n"] == 2 and tps["mean"] > 0
        assert tps["ci95_low"] <= tps["mean"] <= tps["ci95_high"]
        assert p99["mean"] >= row["figures"]["lat_p50"]["mean"] > 0
        # the mean across repeats is the mean of each run's own (pgbench) tps
        assert tps["mean"] == pytest.approx(sum(r["tps"] for r in row["runs"]) / 2)
    # each run's figures against pgbench's own summary (tps, latency average) and its per-transaction
    # log's whole-run histogram (p99): the report does not average per-tick figures
    for row in report["rows"]:
        files = [r["file"] for r in plan["runs"] if r["settings"] == row["settings"]]
        for figures, f in zip(row["runs"], files):
            with Recording(out / f) as rec:
                s = rec.workloads()[-1]["summary"]
            assert figures["tps"] == pytest.approx(s["tps"]) and figures["lat_mean"] == pytest.approx(s["latency_avg_ms"])
            assert figures["lat_p99"] == pytest.approx(s["measured"]["latency_p99_ms"], rel=0.01)
    judged = report["rows"][1]["figures"]["tps"]
    assert judged["verdict"] in ("changed", "within noise") and judged["noise_floor_pct"] is not None
    for fmt, first in (("table", "figure"), ("markdown", "| figure"), ("csv", "figure,unit")):
        assert cli.main(["experiment", "report", str(out), "--format", fmt, "--baseline",
                         "backend_flush_after=256kB"]) == 0
        text = capsys.readouterr().out
        assert text.startswith(first) and "latency p99" in text and "baseline" in text or fmt == "csv"


def _wait(pred, timeout: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_ctrl_c_restores_keeps_finished_runs_and_resume_completes(make_cluster, tmp_path, capsys):
    """SIGINT during the second recorded run: exit 130, the first run kept, the ALTER SYSTEM value
    the server had before (bgwriter_delay = 50ms) back; `resume` then does the rest and restores it
    again; the interrupted attempt's recording is kept beside."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("ALTER SYSTEM SET bgwriter_delay = '50ms'")
        conn.execute("select pg_reload_conf()")
    time.sleep(0.5)
    out = tmp_path / "exp"
    cmd = [sys.executable, "-m", "pgio_tui", "experiment", "run", *conn_args(cluster), "--allow-settings",
           "--init-scale", "1", "--no-discard-first", "--set", "bgwriter_delay=100ms,300ms", "--repeat", "2",
           "-o", str(out), "--quiet", "pgbench", "--", "-c", "2", "-T", "4"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        plan_file = out / "experiment.json"
        second = lambda: plan_file.exists() and json.loads(plan_file.read_text())["runs"][1]["file"]  # noqa: E731
        _wait(lambda: bool(second()) and (out / second()).exists(), 90, proc)
        time.sleep(1.5)  # inside the second run
        assert server_setting(cluster, "bgwriter_delay")[0] == "300ms"
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "experiment resume" in output and "Traceback" not in output
    assert output.count("flag: ended early: stopped by the user") == 1, output  # with the run's line, once
    plan = json.loads(plan_file.read_text())
    assert [r["state"] for r in plan["runs"]] == ["done", "interrupted", "planned", "planned"]
    assert plan["restored"] is True
    assert server_setting(cluster, "bgwriter_delay") == ("50ms", ["50ms"])
    first = out / plan["runs"][0]["file"]
    assert recorded(first, "bgwriter_delay")[0] == "100"

    rc = cli.main(["experiment", "resume", str(out), *conn_args(cluster), "--allow-settings", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    plan = json.loads(plan_file.read_text())
    assert [r["state"] for r in plan["runs"]] == ["done"] * 4 and plan["restored"] is True
    assert plan["runs"][0]["file"] == str(first.relative_to(out))  # the finished run was not redone
    assert recorded(out / plan["runs"][1]["file"], "bgwriter_delay")[0] == "300"
    assert len(list((out / "runs").glob("*.interrupted-1.pgio"))) == 1
    assert server_setting(cluster, "bgwriter_delay") == ("50ms", ["50ms"])
    capsys.readouterr()
    assert cli.main(["experiment", "report", str(out), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["repeats"] for r in rows] == [2, 2]


def test_lab_restarts_for_a_postmaster_setting(pg_bindir, tmp_path, capsys):
    """--lab: shared_buffers needs a restart, which the lab cluster gets; each recording holds its
    run's value; the lab is gone afterwards."""
    out = tmp_path / "lab"
    rc = cli.main(["experiment", "run", "--lab", "--init-scale", "1", "--no-discard-first", "--set",
                   "shared_buffers=16MB,32MB", "--repeat", "1", "-o", str(out), "--quiet", "pgbench", "--",
                   "-c", "1", "-T", "2"])
    err = capsys.readouterr().err
    assert rc == 0, err
    plan = json.loads((out / "experiment.json").read_text())
    assert plan["originals"]["shared_buffers"]["context"] == "postmaster" and plan["restored"] is True
    for r in plan["runs"]:
        value, unit = recorded(out / r["file"], "shared_buffers")
        assert unit == "8kB" and int(value) * 8 // 1024 == int(r["settings"]["shared_buffers"].removesuffix("MB"))
    assert "settings restored: shared_buffers=RESET" in err


def test_a_user_server_is_not_restarted(pg_cluster, tmp_path, capsys):
    out = tmp_path / "e"
    rc = cli.main(["experiment", "run", *conn_args(pg_cluster), "--allow-settings", "--set",
                   "shared_buffers=16MB,32MB", "-o", str(out), "pgbench", "--", "-T", "2"])
    assert rc == 1 and "needs a server restart" in capsys.readouterr().err
    assert server_setting(pg_cluster, "shared_buffers")[1] == []  # nothing was changed


def restarting_pgio(out: Path, restart_warmup: str, run_time: str, capsys) -> tuple[list[dict], str]:
    """A --lab pgio experiment whose every run restarts the server (shared_buffers 16MB, 32MB; no
    first run discarded): its runs from experiment.json and what it said on stderr."""
    rc = cli.main(["experiment", "run", "--lab", "--no-discard-first", "--set", "shared_buffers=16MB,32MB",
                   "--repeat", "1", "--restart-warmup", restart_warmup, "-o", str(out), "--quiet",
                   "pgio", "--scale", "16M", "--run-time", run_time])
    err = capsys.readouterr().err
    assert rc == 0, err
    return json.loads((out / "experiment.json").read_text())["runs"], err


def test_a_restart_is_followed_by_an_unrecorded_warm_up(pg_bindir, tmp_path, capsys):
    """A run whose settings restarted the server (shared_buffers) gets --restart-warmup seconds of
    its workload first, unrecorded: each recording's ticks all come after its warm-up ended, so the
    figures hold none of the cold caches; experiment.json keeps it, the plan and the report say it."""
    out = tmp_path / "warm"
    runs, err = restarting_pgio(out, "3", "3", capsys)
    assert json.loads((out / "experiment.json").read_text())["restart_warmup_s"] == 3
    for r in runs:
        w = r["warmup"]
        assert w["after_restart"] is True and w["s"] == 3 and w["state"] == "done", w
        assert w["end_t"] - w["start_t"] >= 3  # pgio ran its 3 s
        with Recording(out / r["file"]) as rec:
            first_tick_t = rec.conn.execute("SELECT min(t) FROM ticks").fetchone()[0]
        assert first_tick_t >= w["end_t"], (first_tick_t, w)  # nothing of the warm-up was recorded
        assert f"run {r['index']}/2: the server restarted: 3 s of the workload first, not recorded" in err
    assert cli.main(["experiment", "report", str(out), "--format", "markdown"]) == 0
    report = capsys.readouterr().out
    assert ("warm-up after a restart: 2 run(s) started right after the server restarted; the first 3 s of the "
            "workload ran unrecorded before each (cold caches), so no figure holds them") in report
    assert cli.main(["info", str(out)]) == 0
    assert "3 s warm-up after a restart" in capsys.readouterr().out


def test_without_a_warm_up_the_report_names_the_runs_that_start_cold(pg_bindir, tmp_path, capsys):
    """--restart-warmup 0: no warm-up, and the report says which runs hold a restart's cold caches."""
    out = tmp_path / "cold"
    runs, err = restarting_pgio(out, "0", "2", capsys)
    assert "the server restarted:" not in err
    assert [r["warmup"] for r in runs] == [{"s": 0.0, "after_restart": True}] * 2  # no first run discarded: both
    assert cli.main(["experiment", "report", str(out), "--format", "markdown"]) == 0
    assert ("no warm-up after a restart: the first seconds of 2 run(s) (cold caches) are in their figures "
            "(--restart-warmup 0): runs 1, 2") in capsys.readouterr().out
