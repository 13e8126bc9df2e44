"""A real pgbench run checked against pgbench itself (issue 11, items 8-10 and the service fix).

Whole-run percentiles from the recording's per-tick histograms against percentiles computed from
pgbench's own per-transaction log (-l), tps/mean/stddev against pgbench's summary; diff, report and
the diff screen's comparison agree; the recording ends with its workload; failures and early ends
reach the exit line and the recording; `-d service=…` reaches pgbench.
"""

from __future__ import annotations

import glob
import re
import threading
import time
import uuid

import pytest

from pgio_tui import cli
from pgio_tui.analysis import report
from pgio_tui.commands import diff as diff_cmd
from pgio_tui.analysis.align import window
from pgio_tui.analysis.summary import summarize
from pgio_tui.stats import percentile
from pgio_tui.store.reader import Recording
from pgio_tui.workloads.pgbench import PgbenchWorkload, parse_log_line


def fresh_db(cluster) -> str:
    name = f"pgt_{uuid.uuid4().hex[:8]}"
    with cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def conn_args(cluster, db: str) -> list[str]:
    return ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres", "-d", db]


@pytest.fixture(scope="module")
def pgbench_run(pg_cluster, tmp_path_factory):
    """One recorded pgbench run (scale 1, 4 clients, 8 s) with pgbench's own per-transaction log."""
    tmp = tmp_path_factory.mktemp("truth")
    db = fresh_db(pg_cluster)
    path, prefix = tmp / "run.pgio", str(tmp / "own_log")
    rc = cli.main(["bench", "pgbench", *conn_args(pg_cluster, db), "--init-scale", "1", "--headless",
                   "--record", str(path), "--", "-c", "4", "-j", "2", "-T", "8", "-l", f"--log-prefix={prefix}"])
    assert rc == 0
    latencies = []
    for f in glob.glob(prefix + ".*"):
        with open(f) as fh:
            latencies += [e.latency_ms for e in map(parse_log_line, fh) if e is not None and e.latency_ms is not None]
    return path, sorted(latencies)


@pytest.mark.slow
def test_whole_run_percentiles_from_transactions(pgbench_run, capsys):
    """Item 10: p50/p95/p99 of the whole run within 1 % of pgbench's raw log; item 9: tps, mean and
    stddev are pgbench's own summary; the window is the run, `pgbench -i` excluded."""
    path, log = pgbench_run
    with Recording(path) as rec:
        (w,) = rec.workloads()
        own = w["summary"]
        win = window(rec, "auto")
        s = summarize(rec, win)
        assert win.align == "workload" and win.whole_workload
        assert win.origin_t >= own["run_start_t"] - 1e-3  # pgbench -i is before the window
        hist = rec.latency_histogram(win.start_tick, win.end_tick)
    assert hist.count == len(log) == own["transactions"]  # every transaction, once
    lines = []
    for p in ("p50", "p95", "p99"):
        exact = percentile(log, float(p[1:]))
        got = s.value("latency", p)
        lines.append(f"{p} recording {got:.4f} ms vs log {exact:.4f} ms ({got / exact - 1:+.3%})")
        assert got == pytest.approx(exact, rel=0.01)
    assert s.value("latency", "tps") == pytest.approx(own["tps"], abs=1e-9)
    assert s.value("latency", "mean") == pytest.approx(own["latency_avg_ms"], abs=1e-9)
    assert s.value("latency", "stddev") == pytest.approx(own["latency_stddev_ms"], abs=1e-9)
    assert s.get("latency", "tps").note == "pgbench's summary"
    with capsys.disabled():
        print(f"\n{'; '.join(lines)}; tps {s.value('latency', 'tps')} vs pgbench {own['tps']}; "
              f"mean {s.value('latency', 'mean')} vs pgbench {own['latency_avg_ms']} ms; {len(log)} transactions")


@pytest.mark.slow
def test_diff_report_and_diff_screen_agree(pgbench_run, tmp_path):
    """Item 9: one default alignment; the diff (its table and the diff screen share the
    Comparison it builds) and the report show the same tps, which is pgbench's."""
    path, _ = pgbench_run
    args = cli.build_parser().parse_args(["diff", str(path), str(path), "--format", "json"])
    comparison = diff_cmd.load(args)
    assert comparison.align == "workload"
    tps = comparison.row("latency", "tps")
    with Recording(path) as rec:
        own = rec.workloads()[0]["summary"]["tps"]
    assert tps.a == tps.b == pytest.approx(own, abs=1e-9)
    out = tmp_path / "r.html"
    assert cli.main(["report", str(path), str(path), "-o", str(out)]) == 0
    html = out.read_text()
    assert f"{own:,.1f}" in html or f"{own:,.0f}" in html
    assert "seconds from the workload start" in html
    command = re.search(r"<h2>Workload</h2><h3>(.*?)</h3>", html).group(1)
    assert command.startswith("A: pgbench -c 4 -j 2 -T 8 -l") and "-P 1" not in command  # the user's, not ours
    assert "number of transactions actually processed" in html  # pgbench's whole summary


@pytest.mark.slow
def test_recording_ends_with_its_workload_in_the_live_feed(pg_cluster, tmp_path):
    """Item 8: under the TUI's feed, the bench recording closes when the workload has ended (its
    stop and summary inside), while the feed goes on; --keep-recording keeps it open."""
    from pgio_tui.sampler import Sampler
    from pgio_tui.tui.feed import LiveFeed

    db = fresh_db(pg_cluster)
    for keep in (False, True):
        path = tmp_path / f"feed-{keep}.pgio"
        sampler = Sampler(pg_cluster.conninfo(db), interval=0.5)
        sampler.open()
        w = PgbenchWorkload(pg_cluster.conninfo(db), ["-c", "2", "-T", "2"], init_scale=1)
        sampler.tick_sources.append(w)
        feed = LiveFeed(sampler, record_path=str(path), workload=w, keep_recording=keep)
        thread = threading.Thread(target=feed.run, daemon=True)
        w.start()
        thread.start()
        deadline = time.monotonic() + 60
        while not w.done:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1.5)  # a few more ticks
        assert (feed.recording is None) is (not keep)
        feed.stop()
        assert feed.wait_closed(10)
        sampler.close()
        with Recording(path) as rec:
            (stop,) = rec.events(["stop"])
            assert (stop.event.text == "pgbench ended") is (not keep)
            assert rec.workloads()[0]["summary"]["source"] == "pgbench"
            last = rec.events(["workload_stop"])[0].tick
            assert (rec.last_tick == last) is (not keep)


@pytest.mark.slow
def test_early_end_and_failure_in_exit_line_and_recording(pg_cluster, tmp_path, capsys):
    """Item 8: a stopped run says "ended early (exit 130)" in the exit line, `info` and the diff
    notes; a failing run says "failed (exit N)"."""
    db = fresh_db(pg_cluster)
    path = tmp_path / "early.pgio"
    timer = threading.Timer(6.0, lambda: __import__("os").kill(__import__("os").getpid(), 2))
    timer.start()
    try:
        rc = cli.main(["bench", "pgbench", *conn_args(pg_cluster, db), "--init-scale", "1", "--headless",
                       "--record", str(path), "--", "-c", "2", "-T", "60"])
    finally:
        timer.cancel()
    err = capsys.readouterr().err
    assert rc == 0
    assert "ended early (exit 130: interrupted)" in err.splitlines()[-1]
    assert cli.main(["info", str(path)]) == 0
    assert "ended early (exit 130: interrupted)" in capsys.readouterr().out
    with Recording(path) as rec:
        s = summarize(rec, window(rec, "auto"))
    assert any("ended early" in n for n in s.notes)

    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT 1/0;\n")
    rc = cli.main(["bench", "pgbench", *conn_args(pg_cluster, db), "--headless", "--",
                   "-t", "1", "-n", "-f", str(bad)])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 1 and "pgbench exited with status 2" in line and "division by zero" in line


@pytest.mark.slow
def test_service_reaches_pgbench(pg_cluster, tmp_path, monkeypatch, capsys):
    """`-d service=NAME`: pgbench runs against the service's database (not the login name's), and a
    failing `pgbench -i` says pgbench's own error, not a hint about --init-scale."""
    db = fresh_db(pg_cluster)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[lab]\nhost={pg_cluster.sockdir}\nport={pg_cluster.port}\nuser=postgres\ndbname={db}\n"
                        f"[nodb]\nhost={pg_cluster.sockdir}\nport={pg_cluster.port}\nuser=postgres\n"
                        f"dbname=no_such_db_{db}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    rc = cli.main(["bench", "pgbench", "-d", "service=lab", "--init-scale", "1", "--headless", "--", "-t", "5"])
    assert rc == 0, capsys.readouterr().err
    with pg_cluster.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM pgbench_branches").fetchone()[0] == 1
    capsys.readouterr()
    w = PgbenchWorkload("service=nodb", ["-t", "1"], init_scale=1)
    w.start()
    assert w.wait(30)
    assert "does not exist" in w.error and "--init-scale" not in w.error
