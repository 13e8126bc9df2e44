"""`pgio-tui serve` and `record --listen` as a user runs them: the endpoint serves ticks, a signal
stops it cleanly, a bad or busy address is one line."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time

from prom_support import http_get

from pgio_tui.store.reader import Recording
from pgio_tui.workloads.cluster import free_port


def _cmd(cluster, *args: str) -> list[str]:
    return [sys.executable, "-m", "pgio_tui", *args, "-h", str(cluster.sockdir), "-p", str(cluster.port),
            "-U", "postgres", "-d", "postgres"]


def test_serve_serves_ticks_and_stops_on_sigterm(pg_cluster):
    port = free_port()
    proc = subprocess.Popen(_cmd(pg_cluster, "serve", "--listen", str(port), "--interval", "0.2", "--quiet"),
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline and "pgio_wal_bytes_total" not in text:
            try:
                _ctype, text = http_get(f"http://127.0.0.1:{port}/metrics")
            except OSError:
                time.sleep(0.2)
        assert re.search(r'^pgio_up\{server="[^"]+"\} 1\.0$', text, re.M), text[:2000]
        assert re.search(r"^pgio_checkpoint_time_progress_ratio\{", text, re.M)
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"serving Prometheus metrics on http://127.0.0.1:{port}/metrics" in err
    assert "served" in err and "signal SIGTERM" in err


def test_serve_needs_listen():
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "serve"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--listen" in r.stderr


def test_bad_listen_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "record", "-o", str(tmp_path / "x.pgio"),
                        "--listen", "nonsense"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--listen 'nonsense': expected [HOST:]PORT" in r.stderr
    assert not (tmp_path / "x.pgio").exists()


def test_busy_port_is_one_line_and_records_nothing(pg_cluster, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = tmp_path / "x.pgio"
        r = subprocess.run([*_cmd(pg_cluster, "record", "-o", str(out), "--listen", f"127.0.0.1:{port}")],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"pgio-tui: error: cannot listen on 127.0.0.1:{port}: "
                                             "Address already in use"], r.stderr
    assert not out.exists()


def test_record_listen_keeps_recording(pg_cluster, tmp_path):
    out = tmp_path / "r.pgio"
    port = free_port()
    r = subprocess.run([*_cmd(pg_cluster, "record", "-o", str(out), "--listen", str(port), "--interval", "0.2",
                              "--duration", "1")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with Recording(out) as rec:
        assert rec.tick_count >= 5
    with socket.socket() as s:  # the endpoint is gone with the command
        assert s.connect_ex(("127.0.0.1", port)) != 0
