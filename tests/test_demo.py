"""`pgio-tui demo` end to end, as a user runs it: a populated recording, and nothing left running
whatever ends it (duration, SIGTERM, Ctrl-C during `pgbench -i`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pgio_tui.store.reader import Recording

pytestmark = pytest.mark.pg


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().split(") ", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(p.name))
    return out


class Demo:
    """The demo in a subprocess, its output read as it comes."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "pgio_tui", "demo", "--headless", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     cwd=Path(__file__).parents[1])
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            assert self.proc.poll() is None, "\n".join(self.lines[-20:])
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in:\n" + "\n".join(self.lines[-20:]))

    def finish(self, timeout: float = 60) -> int:
        rc = self.proc.wait(timeout)
        self._reader.join(5)
        return rc


def _postmaster(datadir: str) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return int(Path(datadir, "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            time.sleep(0.05)
    raise AssertionError("the demo's server did not start")


def _stop_demo_at(pattern: str, sig: int, *args: str) -> tuple[Demo, int, list[int], str]:
    demo = Demo(*args)
    try:
        datadir = demo.wait_for(r"starting a lab cluster .* in (\S+)").group(1)
        postmaster = _postmaster(datadir)
        demo.wait_for(pattern)
    except BaseException:  # the demo never reached the moment: stop it, not leave it running for a year
        demo.proc.send_signal(signal.SIGINT)
        demo.proc.wait(timeout=60)
        raise
    kids = children(demo.proc.pid)
    demo.proc.send_signal(sig)
    return demo, postmaster, kids, datadir


def _nothing_left(demo: Demo, postmaster: int, kids: list[int], datadir: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (alive(postmaster) or any(alive(k) for k in kids)):
        time.sleep(0.1)
    assert not alive(postmaster), "the lab cluster's server outlived the demo"
    assert not [k for k in kids if alive(k)], "a pgbench outlived the demo"
    assert not Path(datadir).parent.exists(), "the demo's lab folder was left behind"


@pytest.mark.slow
def test_sigterm_mid_run_leaves_nothing():
    demo, postmaster, kids, datadir = _stop_demo_at(r"^progress: \d", signal.SIGTERM)
    assert kids, "pgbench should be running"
    rc = demo.finish()
    _nothing_left(demo, postmaster, kids, datadir)
    assert rc == 0, "\n".join(demo.lines[-10:])
    assert any("pgbench stopped:" in line for line in demo.lines)  # its summary, from the log


@pytest.mark.slow
def test_ctrl_c_during_init_leaves_nothing():
    # scale 40: data generation lasts ~2 s even on a fast machine, so the signal lands inside it
    demo, postmaster, kids, datadir = _stop_demo_at(r"pgbench -i -s 40: [1-5]0 % \(", signal.SIGINT, "--scale", "40")
    rc = demo.finish()
    _nothing_left(demo, postmaster, kids, datadir)
    assert rc == 0
    assert any("pgbench -i interrupted" in line for line in demo.lines), "\n".join(demo.lines[-10:])
    assert not any(line.startswith("progress:") for line in demo.lines)  # no benchmark after a stopped init


@pytest.mark.slow
def test_demo_records_a_populated_session(tmp_path):
    path = tmp_path / "demo.db"
    demo = Demo("--duration", "20", "--record", str(path))
    rc = demo.finish(timeout=180)
    assert rc == 0, "\n".join(demo.lines[-20:])
    check_demo_recording(path)


def test_port_clash_is_one_line_and_cleans_up(pg_cluster, monkeypatch, capsys):
    """Another live postmaster holds the demo's port in its socket directory, on every attempt."""
    import tempfile

    from pgio_tui import cli
    from pgio_tui.workloads import cluster as cluster_mod
    from pgio_tui.commands import demo

    base = Path(tempfile.mkdtemp(prefix="pgio-demo-test-"))  # reachable by the server's user
    base.chmod(0o755)
    lab = base / "pgio-demo-lab-clash"  # the lab folder the demo's cluster will make
    sock = lab / "sock"
    sock.mkdir(parents=True)
    (sock / f".s.PGSQL.{pg_cluster.port}.lock").write_text(f"{pg_cluster.postmaster_pid}\n")
    monkeypatch.setattr(demo, "_demo_dir", lambda: base)
    monkeypatch.setattr(cluster_mod.tempfile, "mkdtemp", lambda prefix, dir: str(lab))
    monkeypatch.setattr(cluster_mod, "free_port", lambda: pg_cluster.port)
    assert cli.main(["demo", "--headless", "--duration", "5"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert re.fullmatch(rf'pgio-tui: error: PostgreSQL \S+ did not start on port {pg_cluster.port}: FATAL:  lock file '
                        rf'"\S+/\.s\.PGSQL\.{pg_cluster.port}\.lock" already exists', err[-1]), err[-1]
    assert not lab.exists()  # nothing left: the half-made cluster is gone
    assert pg_cluster.running
    base.rmdir()


def check_demo_recording(path) -> dict:
    """What the README promises a newcomer sees: checkpoints, writes by source, Dirty, latency."""
    with Recording(path) as rec:
        metrics = ["checkpoint.active", "checkpoint.time_progress", "writes.backend", "writes.checkpointer",
                   "writes.bgwriter", "mem.dirty_kb", "latency.tps", "latency.p99_ms", "wal.bytes_s"]
        rows = list(rec.rows(metrics))
        seen = {m: [r[3 + i] for r in rows if r[3 + i] is not None] for i, m in enumerate(metrics)}
        assert len(rows) >= 20
        assert all(seen[m] for m in metrics), {m: len(v) for m, v in seen.items()}
        assert max(seen["checkpoint.active"]) == 1  # a checkpoint ran while we watched
        assert max(seen["writes.backend"]) > 0 and max(seen["mem.dirty_kb"]) > 0
        assert len(seen["latency.p99_ms"]) >= 15 and max(seen["latency.tps"]) > 0
        (w,) = rec.workloads()
        assert w["kind"] == "pgbench" and w["exit_code"] == 0 and w["summary"]["transactions"] > 0
        kinds = {e.event.kind for e in rec.events()}
        assert {"workload_start", "workload_stop", "checkpoint_start"} <= kinds
        return {m: len(v) for m, v in seen.items()}


if __name__ == "__main__":  # scripts/demo-clean-venv.sh checks its recording with this
    print(check_demo_recording(sys.argv[1]))
    os._exit(0)
