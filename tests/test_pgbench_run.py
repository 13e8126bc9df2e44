"""pgbench launched for real on a lab cluster: the recording agrees with pgbench, bad input is
shown and kept, stopping (also during `pgbench -i`) leaves no process behind."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from pgio_tui import cli
from pgio_tui.store.reader import Recording
from pgio_tui.workloads.pgbench import PgbenchWorkload


def fresh_db(cluster) -> str:
    name = f"pgb_{uuid.uuid4().hex[:8]}"
    with cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def conn_args(cluster, db: str) -> list[str]:
    return ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", db]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_recording_agrees_with_pgbench_summary(pg_cluster, tmp_path, capsys):
    """Scale 1, 10 s: tps and latency average from the recorded ticks within 1 % of pgbench's own.

    tps: the transactions of all ticks over the benchmark's window (its first transaction's start to
    its last one's end, from the log pgio-tui tails); latency: the ticks' means weighted by their
    transaction counts."""
    db = fresh_db(pg_cluster)
    path = tmp_path / "pgbench.db"
    rc = cli.main(["bench", "pgbench", *conn_args(pg_cluster, db), "--init-scale", "1", "--headless",
                   "--record", str(path), "--", "-c", "4", "-j", "2", "-T", "10"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "number of transactions actually processed" in out.out  # pgbench's output is shown
    with Recording(path) as rec:
        (w,) = rec.workloads()
        s = w["summary"]
        assert w["kind"] == "pgbench" and w["exit_code"] == 0 and s["source"] == "pgbench"
        assert w["argv"][-7:-1] == ["-c", "4", "-j", "2", "-T", "10"] and w["params"]["init_scale"] == 1
        assert f"port={pg_cluster.port}" in w["argv"][-1]  # the conninfo, pgbench's database argument
        ticks = [r for r in rec.rows(["latency.txns", "latency.mean_ms", "latency.tps", "latency.p99_ms"])
                 if r[3] is not None]
        lines = [line for _, _, line in rec.workload_output(w["id"])]
        assert any(line.startswith("tps = ") for line in lines) and any("100%" in line for line in lines)
        kinds = [e.event.kind for e in rec.events(["workload_start", "workload_stop"])]
        assert kinds == ["workload_start", "workload_stop"]
    txns = sum(r[3] for r in ticks)
    assert txns == s["transactions"]  # every logged transaction counted once
    weighted_mean = sum(r[3] * r[4] for r in ticks if r[3]) / txns
    recorded_tps = txns / s["measured"]["window_s"]  # over the benchmark's window in its log
    tps_err = abs(recorded_tps - s["tps"]) / s["tps"]
    lat_err = abs(weighted_mean - s["latency_avg_ms"]) / s["latency_avg_ms"]
    print(f"tps recorded {recorded_tps:.2f} vs pgbench {s['tps']:.2f} ({tps_err:.3%}); latency avg recorded "
          f"{weighted_mean:.4f} vs pgbench {s['latency_avg_ms']} ms ({lat_err:.3%})")
    assert tps_err < 0.01 and lat_err < 0.01
    assert all(r[6] is not None and r[6] >= r[4] * 0.5 for r in ticks if r[3] > 10)  # p99 alongside
    assert len(ticks) >= 9


def test_bad_argument_shown_and_kept(pg_cluster, tmp_path, capsys):
    path = tmp_path / "bad.db"
    rc = cli.main(["bench", "pgbench", *conn_args(pg_cluster, "postgres"), "--headless", "--record", str(path),
                   "--", "--no-such-option"])
    err = capsys.readouterr()
    assert rc == 1
    assert "unrecognized option '--no-such-option'" in err.out  # pgbench's own words, as printed
    assert "pgbench exited with status 1: pgbench: unrecognized option '--no-such-option'" in err.err
    with Recording(path) as rec:
        (w,) = rec.workloads()
        assert w["exit_code"] == 1
        assert any("unrecognized option" in line for _, stream, line in rec.workload_output(w["id"])
                   if stream == "stderr")
        assert [e.event.kind for e in rec.events(["workload_stop"])] == ["workload_stop"]


def test_stop_mid_run_keeps_a_summary_and_no_process(pg_cluster):
    db = fresh_db(pg_cluster)
    w = PgbenchWorkload(pg_cluster.conninfo(db), ["-c", "2", "-T", "60"], init_scale=1)
    w.start()
    deadline = time.monotonic() + 60
    # transactions already in the per-transaction log (pgbench flushes it in ~4 kB blocks: on a busy
    # machine the first progress line can come before any of them)
    while not ((w.partial_summary() or {}).get("measured") or {}).get("transactions"):
        assert time.monotonic() < deadline and not w.finished, w.output_tail(5)
        time.sleep(0.2)
    pid = w._run_pid
    t0 = time.monotonic()
    w.stop()
    assert w.wait(10) and time.monotonic() - t0 < 5
    assert not alive(pid)
    s = w.summary
    assert s["interrupted"] and s["source"] == "pgio-tui" and "no summary" in s["note"]
    assert s["measured"]["transactions"] > 0 and s["measured"]["latency_mean_ms"] > 0
    assert not w.workdir.exists()  # the temporary log went with it
    assert w.error is None and w.outcome().startswith("stopped:")


def test_ctrl_c_during_init(pg_cluster):
    db = fresh_db(pg_cluster)
    w = PgbenchWorkload(pg_cluster.conninfo(db), ["-T", "5"], init_scale=30)
    w.start()
    deadline = time.monotonic() + 30
    while w._proc is None or w.phase != "setup":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.5)  # pgbench -i is generating data now
    pid = w._proc.pid
    w.stop()
    assert w.wait(15)
    assert not alive(pid) and w._run_pid is None  # the benchmark never started
    assert w.exit_code == 130 and "pgbench -i interrupted" in w.error and "--init-scale" in w.error


def test_pgbench_env_has_no_password_in_argv(pg_cluster):
    w = PgbenchWorkload(pg_cluster.conninfo() + " password=s3cret", ["-T", "1"])
    assert not any("s3cret" in a for a in w.argv) and w.env["PGPASSWORD"] == "s3cret"
    assert os.path.isdir(w.workdir)
    w.stop()  # never started: only its empty log directory goes
    assert not w.workdir.exists() and not w.running
