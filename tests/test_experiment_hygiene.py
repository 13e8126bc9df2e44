"""Experiments beyond pgbench and the first slice, on real throwaway clusters at toy sizes: the sql
and pgio workloads, os.page_cache (a cgroup memory cap), --allow-restart on a user's server, and the
hygiene around each run (Dirty wait, flags for autovacuum / anti-wraparound, WAL files, outcome)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pgio_tui import cli
from pgio_tui.experiments import hygiene
from pgio_tui.sources.procfs import LocalProc
from pgio_tui.store.reader import Recording

CAPTURE = Path(__file__).parent / "data" / "proc" / "vm-6.18"  # real /proc files (tests/data/proc/capture.sh)


def conn_args(cluster) -> list[str]:
    return ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", "postgres"]


def plan_of(out: Path) -> dict:
    return json.loads((out / "experiment.json").read_text())


def summary_of(path: Path) -> dict:
    with Recording(path) as rec:
        return rec.workloads()[-1]["summary"]


def recorded(path: Path, name: str) -> str:
    with Recording(path) as rec:
        return str(rec.settings()[name].value)


class Captured(LocalProc):
    """The captured meminfo/vmstat pair; `dirty_kb` replaces the Dirty line (the capture's machine
    was below its threshold, and filling 2 GB of Dirty here would disturb everything else)."""

    label = "snapshot"

    def __init__(self, dirty_kb: int | None = None):
        self.dirty_kb = dirty_kb

    def read(self, path: str) -> str | None:
        name = {"/proc/meminfo": "meminfo", "/proc/vmstat": "vmstat"}.get(path)
        if name is None:
            return None
        text = (CAPTURE / f"{name}.0").read_text()
        if name == "meminfo" and self.dirty_kb is not None:
            text = "\n".join(f"Dirty:          {self.dirty_kb} kB" if line.startswith("Dirty:") else line
                             for line in text.splitlines())
        return text


def test_dirty_wait_then_a_flag_when_it_stays_above(pg_cluster):
    """Under the threshold: no wait. Above it: the wait lasts its timeout, and the run gets a flag
    that says Dirty and the threshold (600087 pages × 4 kB in the capture)."""
    said = []
    prep = hygiene.prepare(pg_cluster.conninfo(), dirty_wait_s=1.0, reader=Captured(), say=said.append)
    assert prep["checkpoint"] and prep["dirty_kb"] == 215092 and prep["dirty_background_threshold_kb"] == 600087 * 4
    assert prep["dirty_wait_s"] < 0.5 and not said and hygiene.start_flags(prep, 1.0) == []
    t0 = time.monotonic()
    prep = hygiene.prepare(pg_cluster.conninfo(), dirty_wait_s=1.0, reader=Captured(3_000_000), say=said.append)
    assert 1.0 <= time.monotonic() - t0 < 5 and prep["dirty_wait_s"] >= 1.0
    assert said and "waiting up to 1 s for Dirty (2929 MB)" in said[0]
    [f] = hygiene.start_flags(prep, 1.0)
    assert f["kind"] == "dirty_at_start" and f["dirty_kb"] == 3_000_000
    assert "Dirty 2929 MB above the background threshold 2344 MB" in f["text"]


def test_outcome_flags():
    assert hygiene.outcome_flags("done", "", 60.2, 60) == []
    assert hygiene.outcome_flags("done", "", 30, 60)[0]["text"] == "ended early: ran 30 s of the 60 s asked"
    assert hygiene.outcome_flags("failed", "pgbench exited with 1", 2, 60)[0]["kind"] == "workload_failed"
    assert hygiene.outcome_flags("interrupted", "stopped by the user", 5, 60)[0]["kind"] == "ended_early"
    assert hygiene.outcome_flags("done", "", 3, None) == []  # sql: no length asked


def test_sql_workload_times_each_execution(make_cluster, tmp_path, capsys):
    """synchronous_commit on/off × 1 on a user's server: each run times 2 executions of a bulk
    INSERT (after an untimed TRUNCATE); the server's own execution time (pg_stat_statements, reset
    before the run) is below the client's; the first run after init creates WAL files, flagged."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE EXTENSION pg_stat_statements")
    out = tmp_path / "sql"
    insert = "INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 200000) g"
    rc = cli.main(["experiment", "run", *conn_args(cluster), "--allow-settings", "--no-discard-first",
                   "--set", "synchronous_commit=on,off", "--repeat", "1", "-o", str(out), "--quiet",
                   "sql", insert, "--times", "2", "--before", "CREATE TABLE IF NOT EXISTS t (a int, b text); TRUNCATE t"])
    assert rc == 0, capsys.readouterr().err
    plan = plan_of(out)
    assert plan["format"] == 2 and plan["workload"]["kind"] == "sql" and plan["restored"] is True
    for run in plan["runs"]:
        s = summary_of(out / run["file"])
        assert s["executions"] == 2 and len(s["elapsed_ms"]) == 2 and all(ms > 0 for ms in s["elapsed_ms"])
        assert s["elapsed_s_total"] == pytest.approx(sum(s["elapsed_ms"]) / 1000, abs=0.002)
        assert recorded(out / run["file"], "synchronous_commit") == run["settings"]["synchronous_commit"]
        assert run["hygiene"]["checkpoint"] and run["hygiene"]["pgss_reset"]
    with cluster.connect() as conn:
        assert conn.execute("select count(*) from t").fetchone()[0] == 200000  # TRUNCATE ran before each
        calls, server_ms = conn.execute("select calls, total_exec_time from pg_stat_statements "
                                        "where query like 'INSERT INTO t%'").fetchone()
        assert conn.execute("select current_setting('synchronous_commit')").fetchone()[0] == "on"
    last = summary_of(out / plan["runs"][-1]["file"])
    assert calls == 2 and 0 < server_ms <= sum(last["elapsed_ms"])
    [kept] = [q for q in plan["runs"][-1]["statements"] if q["query"].startswith("INSERT INTO t")]
    assert kept["calls"] == 2 and kept["total_ms"] == pytest.approx(server_ms, abs=5e-4)  # read after the run, kept to the µs
    wal = [f for f in plan["runs"][0]["flags"] if f["kind"] == "wal_files_created"]
    assert wal and wal[0]["after"] > wal[0]["before"]


def test_anti_wraparound_autovacuum_is_flagged_as_such(make_cluster, tmp_path, capsys):
    """A run that uses 110 000 transaction ids (subtransactions that insert) with
    autovacuum_freeze_max_age at its minimum, 100 000: autovacuum vacuums tables to prevent
    wraparound inside the run's window, and the run says so."""
    cluster = make_cluster(autovacuum_freeze_max_age=100000, autovacuum_naptime="1s")
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE x (i int)")
    consume = ("DO $$ BEGIN FOR i IN 1..110000 LOOP BEGIN INSERT INTO x VALUES (i); "
               "EXCEPTION WHEN others THEN NULL; END; END LOOP; END $$")
    out = tmp_path / "wrap"
    rc = cli.main(["experiment", "run", *conn_args(cluster), "--allow-settings", "--no-discard-first",
                   "--set", "vacuum_cost_delay=0", "--repeat", "1", "-o", str(out), "--quiet",
                   "sql", "SELECT pg_sleep(4)", "--before", consume])
    assert rc == 0, capsys.readouterr().err
    [run] = plan_of(out)["runs"]
    wrap = [f for f in run["flags"] if f["kind"] == "autovacuum_wraparound"]
    assert wrap, run["flags"]
    assert all(f["text"].startswith("anti-wraparound autovacuum ran in the run's window") for f in wrap)
    with cluster.connect() as conn:  # the server's own counters agree: those tables were vacuumed
        for f in wrap:
            if f["vacuums"]:
                assert conn.execute("select autovacuum_count from pg_stat_all_tables "
                                    "where schemaname || '.' || relname = %s", [f["table"]]).fetchone()[0] >= 1


def test_allow_restart_on_a_users_server(make_cluster, tmp_path, capsys):
    """shared_buffers (postmaster) on a server that is not --lab: refused without --allow-restart,
    done with it (pg_ctl restart as the data directory's owner), and put back afterwards."""
    cluster = make_cluster()
    args = ["experiment", "run", *conn_args(cluster), "--allow-settings", "--init-scale", "1", "--no-discard-first",
            "--set", "shared_buffers=16MB,24MB", "--repeat", "1", "-o", str(tmp_path / "r"), "--quiet"]
    assert cli.main([*args, "pgbench", "--", "-c", "1", "-T", "2"]) == 1
    assert "--allow-restart" in capsys.readouterr().err
    out = tmp_path / "r2"
    args[args.index("-o") + 1] = str(out)
    rc = cli.main([*args, "--allow-restart", "pgbench", "--", "-c", "1", "-T", "2"])
    assert rc == 0, capsys.readouterr().err
    plan = plan_of(out)
    for run in plan["runs"]:
        assert int(recorded(out / run["file"], "shared_buffers")) * 8 // 1024 == int(run["settings"]["shared_buffers"][:-2])
    with cluster.connect() as conn:
        assert conn.execute("select current_setting('shared_buffers')").fetchone()[0] == "128MB"
    assert [c["action"] for c in plan["changes"]] == ["set", "set", "restore"] and plan["restored"] is True


def test_page_cache_cap_raises_reads_from_the_device(tmp_path, capsys, pg_bindir):
    """--lab, shared_buffers 16MB, pgio over 64 MB: with the page cache capped at 8MB the device
    serves far more reads than with 512MB; the cgroup held no more page cache than the cap allows,
    and is gone afterwards. Where the host has no cgroup memory controller: skipped, said why."""
    from pgio_tui.experiments import page_cache as pc
    try:
        pc.hierarchy()
    except pc.PageCacheError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "pc"
    rc = cli.main(["experiment", "run", "--lab", "--no-discard-first", "--warmup", "3", "--set", "shared_buffers=16MB",
                   "--set", "os.page_cache=8MB,512MB", "--repeat", "1", "-o", str(out), "--quiet",
                   "pgio", "--scale", "64M", "--run-time", "3", "--sessions", "2"])
    assert rc == 0, capsys.readouterr().err
    plan = plan_of(out)
    assert plan["restored"] is True
    reads = {}
    for run in plan["runs"]:
        cap = run["page_cache"]
        size = pc.parse_size(run["settings"]["os.page_cache"])
        assert cap["page_cache_bytes"] == size and cap["shared_buffers_in_limit_bytes"] == 16 * 2**20
        assert cap["limit_bytes"] == size + 16 * 2**20 + cap["process_bytes"] + pc.PROCESS_ALLOWANCE
        assert cap["at_end"]["page_cache_bytes"] <= size + pc.PROCESS_ALLOWANCE + cap["process_bytes"]
        assert not Path(cap["cgroup"]).exists()
        s = summary_of(out / run["file"])
        reads[run["settings"]["os.page_cache"]] = sum(s["physical_reads"].values())
    assert reads["8MB"] > 3 * reads["512MB"] + 100, reads


def test_page_cache_bad_size_is_one_line(tmp_path, capsys):
    rc = cli.main(["experiment", "run", "--lab", "--set", "os.page_cache=lots", "-o", str(tmp_path / "e"),
                   "pgio", "--scale", "8M"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "os.page_cache='lots': give a size like 256MB" in err


def test_workload_words_parse_with_the_bench_defaults():
    """pgio's options mean what `bench pgio`'s mean, with the same defaults (one set: PGIO_DEFAULTS);
    sql's statement stays one word; bad words are one line."""
    from dataclasses import asdict

    from pgio_tui.cli import _split_workload, build_parser
    from pgio_tui.experiments.plan import PlanError
    from pgio_tui.experiments.workloads import asked_s, parse
    from pgio_tui.workloads.pgio_config import PgioConfig
    default = {k: v for k, v in asdict(PgioConfig()).items() if k != "setup"}
    assert parse("pgio", [], None)["config"] == default
    spec = parse("pgio", ["--scale", "16M", "--run-time", "7", "--update-pct", "50"], None)
    assert spec["config"]["scale"] == 2048 and asked_s(spec) == 7.0 and spec["config"]["update_pct"] == 50
    assert asked_s(parse("pgbench", ["-c", "2", "-T", "30"], 1)) == 30.0
    argv = ["experiment", "run", "-d", "sql", "--set", "a=1", "-o", "x", "sql", "SELECT 1", "--times", "3"]
    cut, words = _split_workload(build_parser(), argv)
    assert cut[-1] == "sql" and words == ["SELECT 1", "--times", "3"]  # -d's value "sql" is not the workload
    assert parse("sql", words, None) == {"kind": "sql", "statement": "SELECT 1", "times": 3, "before": None}
    for kind, bad in (("pgio", ["--update-pct", "70"]), ("pgio", ["--bogus"]), ("sql", []), ("sql", ["x", "--times", "0"])):
        with pytest.raises(PlanError):
            parse(kind, bad, None)


def test_a_host_without_a_cgroup_memory_controller_refuses_in_one_line(tmp_path):
    """The same command in a private mount namespace whose cgroup file systems are unmounted (the
    host's stay as they are): one line, exit 1, no folder left behind, no server started."""
    import os
    import shutil
    import subprocess
    import sys
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to hide the cgroup file systems in a mount namespace")
    out = tmp_path / "e"
    script = ("for m in $(awk '$3 ~ /^cgroup/ {print $2}' /proc/self/mounts | sort -r); do umount -l \"$m\"; done; "
              f"exec {sys.executable} -m pgio_tui experiment run --lab --set os.page_cache=64MB,128MB "
              f"-o {out} pgio --scale 8M")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1],
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    if "unshare failed" in r.stderr or "Operation not permitted" in r.stderr:
        pytest.skip(f"no mount namespace here: {r.stderr.strip()}")
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("pgio-tui: error: os.page_cache: this host has no cgroup memory controller (neither v2 "
                        "memory.max nor v1 memory.limit_in_bytes): the page cache cannot be capped here\n")
    assert not out.exists()


def test_reinit_sets_pgbench_up_before_every_run(make_cluster, tmp_path, capsys):
    """--reinit: pgbench -i before each run, so pgbench_history holds only the last run's
    transactions (pgbench's own count); without it the runs' rows add up (-n: pgbench itself does not
    truncate the history before a run)."""
    cluster = make_cluster()

    def history_after(name: str, *extra: str) -> tuple[int, list[int]]:
        out = tmp_path / name
        rc = cli.main(["experiment", "run", *conn_args(cluster), "--allow-settings", "--init-scale", "1",
                       "--no-discard-first", *extra, "--set", "bgwriter_delay=100ms,200ms", "--repeat", "1",
                       "-o", str(out), "--quiet", "pgbench", "--", "-n", "-c", "1", "-T", "2"])
        assert rc == 0, capsys.readouterr().err
        done = [summary_of(out / r["file"])["transactions"] for r in plan_of(out)["runs"]]
        with cluster.connect() as conn:
            return conn.execute("select count(*) from pgbench_history").fetchone()[0], done
    rows, done = history_after("again", "--reinit")
    assert rows == done[-1] > 0
    rows, done = history_after("once")
    assert rows == sum(done)


def test_sigterm_mid_run_lifts_the_cap_and_restores(tmp_path):
    """SIGTERM during the first recorded run of an os.page_cache × work_mem sweep: exit 130, the
    server's processes out of the experiment's cgroup and the cgroup gone, work_mem back, and
    experiment.json says what was set and put back."""
    import os
    import signal
    import subprocess
    import sys
    from pgio_tui.experiments import page_cache as pc
    try:
        pc.hierarchy()
    except pc.PageCacheError as exc:
        pytest.skip(str(exc))
    root = Path(__file__).parents[1]
    out = tmp_path / "term"
    proc = subprocess.Popen([sys.executable, "-m", "pgio_tui", "experiment", "run", "--lab", "--no-discard-first",
                             "--set", "os.page_cache=16MB,64MB", "--set", "work_mem=8MB", "--repeat", "1", "-o",
                             str(out), "--quiet", "pgio", "--scale", "16M", "--run-time", "30"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            plan = json.loads((out / "experiment.json").read_text()) if (out / "experiment.json").exists() else None
            if plan and plan["runs"][0]["state"] == "running":
                break
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.2)
        time.sleep(2)
        cgroup = Path(plan["runs"][0]["page_cache"]["cgroup"])
        assert cgroup.exists() and (cgroup / "cgroup.procs").read_text().split()  # the server is inside
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=90)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "Traceback" not in output and not cgroup.exists()
    plan = json.loads((out / "experiment.json").read_text())
    assert plan["restored"] is True and [r["state"] for r in plan["runs"]] == ["interrupted", "planned"]
    assert [c["action"] for c in plan["changes"]] == ["set", "set", "restore", "restore"]
    assert plan["changes"][-1]["values"] == {"work_mem": None}
    assert plan["runs"][0]["flags"][0]["kind"] == "ended_early"


def test_only_autovacuum_that_can_matter_is_a_flag():
    """ANALYZE of a small system table (after CREATE TABLE, every first run) is not a disturbance; the
    workload's tables, a big system table and anti-wraparound vacuums always are."""
    av = {"kind": "autovacuum", "text": "autovacuum ran in the run's window: ANALYZE pg_catalog.pg_attribute",
          "table": "pg_catalog.pg_attribute", "bytes": 800_000, "wraparound": False}
    assert not hygiene.matters(av) and not hygiene.matters({**av, "bytes": None})  # older folders: by schema
    assert hygiene.matters({**av, "bytes": hygiene.AV_MIN_BYTES})
    assert hygiene.matters({**av, "table": "public.pgbench_accounts", "bytes": 8192})
    assert hygiene.matters({**av, "kind": "autovacuum_wraparound", "wraparound": True})
    assert hygiene.matters({"kind": "dirty_at_start", "text": "Dirty 900 MB at the start"})


@pytest.mark.pg
def test_top_statements_are_the_workloads_role(make_cluster):
    """A poller connected as another role runs its own statement during the run: not among the
    workload's top statements; the workload's own (this role's) is."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("CREATE ROLE poller LOGIN SUPERUSER")
        conn.execute("SELECT pg_stat_statements_reset()")
        conn.execute("SELECT count(*) AS workload_own FROM pg_class")
    poller = cluster.conninfo().replace("user=postgres", "user=poller")
    assert poller != cluster.conninfo()
    import psycopg
    with psycopg.connect(poller, autocommit=True) as conn:
        conn.execute("SELECT count(*) AS the_poller FROM pg_stat_activity")
    texts = [s["query"] for s in hygiene.statements_after(cluster.conninfo())]
    assert any("workload_own" in t for t in texts) and not any("the_poller" in t for t in texts), texts
