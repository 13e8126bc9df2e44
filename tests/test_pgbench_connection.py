"""Any CONN psql accepts reaches pgbench the same way (issue 22 item 6): keywords without a
database, psql's -h/-p/-U, a URI and a service file; the reference is psql with the same CONN
(the database it lands in) and pgbench's own output (transactions processed). An experiment whose
first run cannot connect stops there, in one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pgio_tui.workloads.pg_binaries import find_client

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, env: dict | None = None, timeout: float = 180):
    return subprocess.run([sys.executable, "-m", "pgio_tui", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=ROOT)


def _psql_db(conn_args: list[str], env: dict) -> str:
    r = subprocess.run([str(find_client("psql")), "-XAtq", *conn_args, "-c", "SELECT current_database()"],
                       capture_output=True, text=True, env={**os.environ, **env}, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_every_conn_psql_accepts_reaches_pgbench(make_cluster, tmp_path):
    cluster = make_cluster()
    sock, port = str(cluster.sockdir), str(cluster.port)
    for db in ("postgres", "benchdb"):
        if db != "postgres":
            cluster.psql(f"CREATE DATABASE {db}")
        subprocess.run([str(find_client()), "-i", "-s", "1", "-q", cluster.conninfo(db)], check=True,
                       capture_output=True, timeout=120)
    services = tmp_path / "services.conf"
    services.write_text(f"[truthlab]\nhost={sock}\nport={port}\nuser=postgres\ndbname=benchdb\n")
    env = {"PGSERVICEFILE": str(services)}
    conns = {  # CONN as given to pgio-tui and to psql alike
        "keywords, no dbname": [f"user=postgres host={sock} port={port}"],
        "psql options": ["-h", sock, "-p", port, "-U", "postgres"],
        "URI": [f"postgresql://postgres@%2F{sock.lstrip('/').replace('/', '%2F')}:{port}/benchdb"],
        "service": ["service=truthlab"],
    }
    for what, conn in conns.items():
        expected = _psql_db(conn if conn[0].startswith("-") else ["-d", conn[0]], env)
        r = _run("bench", "pgbench", "--headless", *conn, "--", "-T", "2", "-c", "1", env=env)
        assert r.returncode == 0, (what, r.stderr[-800:])
        done = re.search(r"number of transactions actually processed: (\d+)", r.stdout)
        assert done and int(done.group(1)) > 0, (what, r.stdout[-800:])
        n = cluster.connect(expected).execute("SELECT count(*) FROM pgbench_history").fetchone()[0]
        assert n >= int(done.group(1)), (what, expected, n)
        cluster.connect(expected).execute("TRUNCATE pgbench_history")


def test_an_experiment_whose_first_run_cannot_connect_stops_in_one_line(make_cluster, tmp_path):
    """The sampler connects (CONN), pgbench cannot (a role that does not exist, given after --)."""
    cluster = make_cluster()
    env = {"PGHOST": str(cluster.sockdir), "PGPORT": str(cluster.port), "PGUSER": "postgres"}
    out = tmp_path / "exp"
    r = _run("experiment", "run", "-d", "postgres", "--allow-settings", "--set", "bgwriter_delay=100ms,200ms",
             "--repeat", "2", "--no-discard-first", "--dirty-wait", "0", "-o", str(out), "--quiet",
             "pgbench", "--", "-U", "nosuchrole", "-T", "2", env=env)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if "could not connect" in ln]
    assert len(lines) == 1 and "no other run is tried" in lines[0] and "nosuchrole" in lines[0], r.stderr
    plan = json.loads((out / "experiment.json").read_text())
    states = [run["state"] for run in plan["runs"]]
    assert states[0] == "failed" and all(s == "planned" for s in states[1:]), states
