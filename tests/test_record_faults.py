"""`pgio-tui record` under faults: the recording survives, the user gets one line that says what to do.

Each test runs the real command in a subprocess against a real cluster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgio_tui.store.reader import Recording

INTERVAL = 0.2


def record_cmd(conn: list[str], out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pgio_tui", "record", *conn, "-o", str(out), "--interval", str(INTERVAL), *extra]


def conn_args(cluster, **kw) -> list[str]:
    return ["-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", kw.get("user", "postgres"),
            "-d", kw.get("dbname", "postgres")]


def run_one_line_error(cmd: list[str], rc: int = 1, **kw) -> str:
    """rc: 1 for an error of ours, 2 when no connection could be made (as psql's)."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    assert r.returncode == rc, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pgio-tui: error: "), r.stderr
    return lines[0]


def wait_for_ticks(path: Path, n: int, timeout: float = 60, proc: subprocess.Popen | None = None) -> None:
    """Until the file being written holds n ticks; says why not (the reader's last error, the
    recorder's exit and its stderr) when it does not."""
    deadline = time.monotonic() + timeout
    last: object = "no file"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the recorder exited ({proc.returncode}) before {n} ticks: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        if path.exists():
            try:
                with Recording(path) as rec:
                    last = f"{rec.tick_count} ticks"
                    if rec.tick_count >= n:
                        return
            except Exception as e:  # a file being written may not read yet
                last = repr(e)
        time.sleep(0.1)
    raise AssertionError(f"{path} never reached {n} ticks in {timeout} s (last read: {last})")


def wait_for_event(path: Path, kind: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with Recording(path) as rec:
                if rec.events([kind]):
                    return
        except Exception:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{path}: no {kind} event in {timeout} s")


def ticks_of(path: Path) -> list[tuple[int, float]]:
    with Recording(path) as rec:
        return [(f.tick, f.t) for f in rec.frames()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_closes_the_file_with_every_tick(pg_cluster, tmp_path, sig):
    out = tmp_path / "sig.pgio"
    proc = subprocess.Popen(record_cmd(conn_args(pg_cluster), out, "--quiet"), stderr=subprocess.PIPE, text=True)
    wait_for_ticks(out, 8)
    sent = time.time()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert f"signal {sig.name}" in err
    ticks = ticks_of(out)
    numbers = [n for n, _ in ticks]
    assert numbers == list(range(len(numbers)))  # nothing dropped
    assert ticks[-1][1] >= sent - 2 * INTERVAL  # everything up to the signal is in the file
    with Recording(out) as rec:
        assert rec.events(["stop"])[-1].event.text == f"signal {sig.name}"
    assert not Path(str(out) + "-wal").exists() or Path(str(out) + "-wal").stat().st_size == 0


def test_sigkill_loses_at_most_a_second(pg_cluster, tmp_path):
    out = tmp_path / "kill.pgio"
    proc = subprocess.Popen(record_cmd(conn_args(pg_cluster), out, "--quiet"))
    wait_for_ticks(out, 10)
    time.sleep(1.3)
    killed = time.time()
    proc.kill()
    proc.wait(timeout=10)
    ticks = ticks_of(out)  # opens without repair
    assert ticks[-1][1] >= killed - 1.0 - INTERVAL, (killed - ticks[-1][1])


@pytest.mark.matrix
def test_server_stop_and_restart_mid_recording(make_cluster, tmp_path):
    cluster = make_cluster()
    out = tmp_path / "restart.pgio"
    proc = subprocess.Popen(record_cmd(conn_args(cluster), out, "--quiet"), stderr=subprocess.PIPE, text=True)
    wait_for_ticks(out, 10, proc=proc)
    cluster.stop("immediate")
    time.sleep(3)
    cluster.start()
    wait_for_event(out, "reconnect")  # however long a busy machine takes to start the server again
    wait_for_ticks(out, ticks_of(out)[-1][0] + 5)  # and a few ticks of PostgreSQL figures after it
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with Recording(out) as rec:
        kinds = [e.event.kind for e in rec.events()]
        assert "gap" in kinds and "reconnect" in kinds and "server_restart" in kinds, kinds
        frames = list(rec.frames())
        # OS figures kept coming while PostgreSQL was away; PostgreSQL figures came back after.
        assert len(frames) >= (frames[-1].t - frames[0].t) / INTERVAL * 0.9  # ticks kept coming, away or not
        gap_tick = next(e.tick for e in rec.events(["gap"]))
        back_tick = next(e.tick for e in rec.events(["reconnect"]))
        assert back_tick > gap_tick
        assert all(f.values.get("observer.server_ms") is None for f in frames if gap_tick <= f.tick < back_tick)
        assert any(f.values.get("observer.server_ms") is not None for f in frames if f.tick > back_tick)


def test_existing_file_is_refused_unless_force(pg_cluster, tmp_path):
    out = tmp_path / "exists.pgio"
    out.write_bytes(b"precious")
    line = run_one_line_error(record_cmd(conn_args(pg_cluster), out, "--duration", "1"))
    assert "--force" in line
    assert out.read_bytes() == b"precious"
    r = subprocess.run(record_cmd(conn_args(pg_cluster), out, "--duration", "1", "--force"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(ticks_of(out)) >= 5


def test_unwritable_output(pg_cluster, tmp_path):
    run_one_line_error(record_cmd(conn_args(pg_cluster), Path("/proc/pgio-test.pgio"), "--duration", "1"))
    run_one_line_error(record_cmd(conn_args(pg_cluster), tmp_path / "no" / "such" / "dir.pgio", "--duration", "1"))


def test_bad_dsn_server_down_and_wrong_password(make_cluster, tmp_path):
    out = tmp_path / "x.pgio"
    line = run_one_line_error(record_cmd(["-d", "host=/tmp port=5432 sslmode=bogus"], out), rc=2)
    assert "sslmode" in line
    line = run_one_line_error(record_cmd(["-d", "this is not=a valid=conninfo ='"], out), rc=2)
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE ROLE pw LOGIN PASSWORD 'right'")
    hba = cluster.datadir / "pg_hba.conf"
    hba.write_text("local all pw scram-sha-256\n" + hba.read_text())
    with cluster.connect() as conn:
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(0.5)
    line = run_one_line_error(record_cmd(conn_args(cluster, user="pw"), out), rc=2,
                              env={**os.environ, "PGPASSWORD": "wrong"})
    assert "password" in line
    cluster.stop()
    line = run_one_line_error(record_cmd(conn_args(cluster), out), rc=2)
    assert "server running" in line
    assert not out.exists()  # nothing half-made when we could not even connect


@pytest.mark.matrix
def test_role_without_pg_monitor_degrades(pg_cluster, tmp_path):
    with pg_cluster.connect() as conn:
        conn.execute("DROP ROLE IF EXISTS plain")
        conn.execute("CREATE ROLE plain LOGIN")
    out = tmp_path / "plain.pgio"
    r = subprocess.run(record_cmd(conn_args(pg_cluster, user="plain"), out, "--duration", "2"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with Recording(out) as rec:
        notes = " ".join(e.event.text for e in rec.events(["note"]))
        assert "pg_monitor" in notes
        last = list(rec.frames())[-1]
        assert last.values.get("writes.checkpointer") is not None  # PUBLIC views still work
        assert last.values.get("mem.dirty_kb") is not None


def test_password_is_never_stored(pg_cluster, tmp_path):
    out = tmp_path / "secret.pgio"
    dsn = f"host={pg_cluster.sockdir} port={pg_cluster.port} user=postgres password=s3cretpw dbname=postgres"
    r = subprocess.run(record_cmd(["-d", dsn], out, "--duration", "1"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for f in tmp_path.iterdir():
        assert b"s3cretpw" not in f.read_bytes(), f


def test_disk_full_keeps_what_was_recorded(pg_cluster, tmp_path):
    """RLIMIT_FSIZE stands in for a full disk: the write fails, the file keeps its ticks.

    The limit sits under the steady size of the recording's -wal file (~290 KB at 5 ticks/s before
    SQLite's auto-checkpoint), so the write fails within seconds, not after minutes of ticks.
    """
    out = tmp_path / "full.pgio"
    code = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (250_000, 250_000)); "
            "from pgio_tui.cli import main; sys.exit(main(sys.argv[1:]))")
    cmd = [sys.executable, "-c", code, *record_cmd(conn_args(pg_cluster), out, "--duration", "120", "--quiet")[3:]]
    line = run_one_line_error(cmd)
    assert "kept" in line
    ticks = ticks_of(out)
    assert len(ticks) > 5


def test_setting_change_is_an_event_and_a_settings_row(make_cluster, tmp_path):
    cluster = make_cluster()
    out = tmp_path / "change.pgio"
    proc = subprocess.Popen(record_cmd(conn_args(cluster), out, "--quiet", "--duration", "3"))
    wait_for_ticks(out, 3)
    with cluster.connect() as conn:
        conn.execute("ALTER SYSTEM SET bgwriter_delay = '50ms'")
        conn.execute("SELECT pg_reload_conf()")
    assert proc.wait(timeout=30) == 0
    with Recording(out) as rec:
        change = rec.events(["setting_change"])
        assert [e.event.data["name"] for e in change] == ["bgwriter_delay"]
        assert change[0].event.text == "bgwriter_delay: 200 -> 50 ms"
        assert rec.settings(tick=rec.first_tick)["bgwriter_delay"].value in ("200", 200)  # at start
        assert rec.settings(tick=rec.last_tick)["bgwriter_delay"].value in ("50", 50)
