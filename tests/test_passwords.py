"""Passwords never reach a recording (issue 10, finding 5), end to end: `pgio-tui record` against a
real server with the password in each form a user may type it, and PGPASSWORD set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.pg

FORMS = {
    "backslash": "host={h} port={p} user=postgres password=ZzA\\ ZzB\\ ZzC",
    "quoted": "host={h} port={p} user=postgres password='ZzA ZzB\\'ZzC'",
    "uri": "postgresql://postgres:ZzA%20ZzB%20ZzC@/postgres?host={h}&port={p}",
    "uri-param": "postgresql:///postgres?host={h}&port={p}&user=postgres&password=ZzA%20ZzB%20ZzC",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_record_keeps_no_password(form, pg_cluster, tmp_path):
    dsn = FORMS[form].format(h=pg_cluster.sockdir, p=pg_cluster.port)
    out = tmp_path / "r.pgio"
    env = {**os.environ, "PGPASSWORD": "EnvSecret-42"}
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "record", "-d", dsn, "-o", str(out), "--duration", "2",
                        "--quiet"], capture_output=True, text=True, env=env, timeout=60,
                       cwd=Path(__file__).parents[1])
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("visible to every local user") == 1, r.stderr  # issue 21 row 14: said once
    assert "use PGPASSWORD, ~/.pgpass or -W instead" in r.stderr and "ZzA" not in r.stderr
    info = subprocess.run([sys.executable, "-m", "pgio_tui", "info", str(out)], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).parents[1]).stdout
    assert "record -d" in info
    blobs = [p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("r.pgio")] + [info.encode()]
    for secret in (b"ZzA", b"ZzB", b"ZzC", b"EnvSecret-42"):
        assert not any(secret in b for b in blobs), (secret, info)


def test_no_warning_without_a_password_on_the_command_line(pg_cluster, tmp_path):
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "record", "-h", str(pg_cluster.sockdir), "-p",
                        str(pg_cluster.port), "-U", "postgres", "-o", str(tmp_path / "r.pgio"), "--duration", "1",
                        "--quiet"], capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[1],
                       env={**os.environ, "PGPASSWORD": "EnvSecret-42"})
    assert r.returncode == 0, r.stderr
    assert "visible to every local user" not in r.stderr
