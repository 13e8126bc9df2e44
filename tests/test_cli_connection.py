"""The command line as psql users expect it: -h is the host (alone: help), -W prompts, pgbench's words
after --, an unknown --devices refused in one line, and `bench` with no server offers --lab."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgio_tui.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, stdin: str | None = None, env: dict | None = None, timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "pgio_tui", *args], capture_output=True, text=True, input=stdin,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=ROOT)


def test_h_alone_prints_help_and_says_it_is_the_host(capsys):
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    assert "usage: pgio-tui live" in out and "-h is the server host (as in psql); --help shows this help" in out
    assert main(["record", "-h"]) == 0
    assert "usage: pgio-tui record" in capsys.readouterr().out


def test_pgbench_options_without_double_dash_get_a_hint(capsys):
    assert main(["bench", "pgbench", "-T", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "-T looks like a pgbench option" in err[0] and " -- " in err[0]


def test_unknown_device_is_refused_in_one_line_listing_the_devices(pg_cluster, tmp_path):
    r = _run("record", "-d", pg_cluster.conninfo(), "-o", str(tmp_path / "x.pgio"), "--duration", "1",
             "--devices", "nosuchdev")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no such block device 'nosuchdev'" in lines[0] and "devices there:" in lines[0], r.stderr
    assert not (tmp_path / "x.pgio").exists()


def test_W_prompts_and_the_password_stays_out_of_the_recording(make_cluster, tmp_path):
    cluster = make_cluster()
    out = tmp_path / "w.pgio"
    r = _run("record", "-W", "-d", cluster.conninfo(), "-o", str(out), "--duration", "1", "--quiet",
             stdin="Zz-secret-Zz\n")
    assert r.returncode == 0, r.stderr
    assert "Password for user postgres" in r.stderr
    assert b"Zz-secret-Zz" not in out.read_bytes()


def test_bench_without_a_server_offers_lab(tmp_path):
    r = _run("bench", "pgbench", "-h", str(tmp_path), "--", "-T", "1")
    assert r.returncode == 2  # a failed connection, as psql's
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect" in lines[0] and "--lab" in lines[0], r.stderr


@pytest.mark.slow
def test_bench_lab_runs_on_a_throwaway_cluster_and_removes_it(pg_bindir, tmp_path):
    rec = tmp_path / "lab.pgio"
    r = _run("bench", "pgbench", "--lab", "--headless", "--init-scale", "1", "--record", str(rec), "--", "-T", "2",
             env={"PGIO_PG_BINDIR": str(pg_bindir)}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "starting a lab cluster" in r.stderr and "removing the lab cluster" in r.stderr
    assert "tps = " in r.stdout + r.stderr
    base = r.stderr.split("starting a lab cluster")[1].split(" in ")[1].split()[0]
    assert not Path(base).exists()
    assert rec.exists()
