"""Statement texts keep no password (issue 21, row 1): pg_stat_statements keeps utility statements
as typed (`ALTER ROLE … PASSWORD '…'` before 16), and recordings and experiment folders are files
people send each other. One scrubber (secrets.scrub_statement), called where a text comes in: the
forms it masks, then end to end on a real server where another role changes its password while an
experiment records, and old files written before the scrubber, shown without it."""

from __future__ import annotations

import json
import sqlite3
import stat
import threading
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from fixture_recording import write_fixture
from pgio_tui import cli
from pgio_tui.secrets import MASK, scrub_statement
from pgio_tui.store.reader import Recording

SECRET = "evilpw"

FORMS = {  # statement -> what it becomes
    "alter role evil password 'evilpw'": "alter role evil password '********'",
    "ALTER ROLE evil WITH LOGIN ENCRYPTED PASSWORD 'ev''ilpw' VALID UNTIL 'infinity'":
        "ALTER ROLE evil WITH LOGIN ENCRYPTED PASSWORD '********' VALID UNTIL 'infinity'",
    "CREATE USER evil PASSWORD E'evil\\'pw'": "CREATE USER evil PASSWORD '********'",
    "create role evil password $q$evilpw$q$": "create role evil password '********'",
    "alter role evil password /* set */ 'evilpw'": "alter role evil password /* set */ '********'",
    "alter role evil password 'evilpw": "alter role evil password '********'",  # cut at 200 characters
    "CREATE USER MAPPING FOR evil SERVER s OPTIONS (user 'evil', password 'evilpw')":
        "CREATE USER MAPPING FOR evil SERVER s OPTIONS (user 'evil', password '********')",
    'ALTER USER MAPPING FOR evil SERVER s OPTIONS (SET "password" \'evilpw\')':
        'ALTER USER MAPPING FOR evil SERVER s OPTIONS (SET "password" \'********\')',
    "select dblink_connect('c', 'host=h password=evilpw dbname=d')":
        "select dblink_connect('c', 'host=h password=******** dbname=d')",
    "select * from dblink('host=h password=''evil pw''', 'select 1') as t(a int)":
        "select * from dblink('host=h password=********', 'select 1') as t(a int)",
    "select dblink_connect(E'host=h password=\\'evilpw\\'')": "select dblink_connect(E'host=h password=********')",
    "select dblink_connect($$postgresql://u:evilpw@h/d$$)": "select dblink_connect($$postgresql://u:********@h/d$$)",
    "select dblink_connect('postgresql://h/d?user=u&password=evilpw')":
        "select dblink_connect('postgresql://h/d?user=u&password=********')",
    "CREATE SUBSCRIPTION s CONNECTION 'host=h password=evilpw' PUBLICATION p":
        "CREATE SUBSCRIPTION s CONNECTION 'host=h password=********' PUBLICATION p",
    # what is not a password stays as it is
    "select 'password' as password, 'evilpw'": "select 'password' as password, 'evilpw'",
    "alter role evil password $1": "alter role evil password $1",
    "select password_encryption from t where x = 'password: none'":
        "select password_encryption from t where x = 'password: none'",
}


@pytest.mark.parametrize("text", sorted(FORMS))
def test_scrub_statement(text):
    assert scrub_statement(text) == FORMS[text]
    assert scrub_statement(FORMS[text]) == FORMS[text]  # scrubbing twice changes nothing


def test_old_recording_shows_no_password(tmp_path, capsys):
    """A recording written before the scrubber: its statement texts are scrubbed as they are read,
    in info, export and the report."""
    path = write_fixture(tmp_path / "old.pgio", n=30)
    with sqlite3.connect(path) as c:
        c.execute("UPDATE statements SET text = ? WHERE id = (SELECT min(id) FROM statements)",
                  (f"alter role evil password '{SECRET}'",))
        c.execute("UPDATE statements SET text = ? WHERE id = (SELECT max(id) FROM statements)",
                  (f"select dblink_connect('host=h password={SECRET}')",))
    out = tmp_path / "r.html"
    for argv in (["export", str(path), "--format", "json"], ["report", str(path), "-o", str(out)]):
        assert cli.main(argv) == 0
    shown = capsys.readouterr().out + out.read_text()
    assert SECRET not in shown and f"alter role evil password &#x27;{MASK}" in shown


@pytest.mark.pg
@pytest.mark.solo  # with both cores busy the ALTER ROLEs fell out of the recorded statements (3 of 4 here)
def test_another_roles_password_never_stored(make_cluster, tmp_path, capsys):
    """Another role runs `alter role evil password 'evilpw'` while an experiment records: the
    recordings, experiment.json and both HTML reports hold no 'evilpw' (each byte of every file
    grepped), while the statement itself was seen (masked); every file 0600, the folders 0700."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.autocommit = True
        conn.execute("create extension if not exists pg_stat_statements")
        conn.execute("create role evil login")
    stop = threading.Event()
    calls = []

    def other_role() -> None:
        with psycopg.connect(make_conninfo(cluster.conninfo(), user="evil"), autocommit=True) as conn:
            while not stop.is_set():
                conn.execute(f"alter role evil password '{SECRET}'")
                calls.append(1)

    def blocker() -> None:
        """Holds pg_authid in share mode most of the time, so the ALTER ROLEs wait and rank among
        the statements by time (pg_stat_statements' top 10 at the run's end)."""
        with cluster.connect() as conn:
            while not stop.is_set():
                with conn.transaction():
                    conn.execute("lock table pg_authid in share mode")
                    stop.wait(0.2)
                stop.wait(0.02)

    threads = [threading.Thread(target=f, daemon=True) for f in (other_role, blocker)]
    for t in threads:
        t.start()
    out = tmp_path / "exp"
    try:
        rc = cli.main(["experiment", "run", "-h", str(cluster.sockdir), "-p", str(cluster.port), "-U", "postgres",
                       "-d", "postgres", "--allow-settings", "--set", "work_mem=4MB,8MB", "--repeat", "1",
                       "--no-discard-first", "-o", str(out), "--quiet", "sql", "select pg_sleep(0.02)",
                       "--times", "150"])
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert rc == 0, capsys.readouterr().err
    assert len(calls) > 10  # the other role was busy during the runs
    assert cli.main(["experiment", "report", str(out), "-o", str(out / "report.html")]) == 0
    assert cli.main(["report", str(out), "-o", str(tmp_path / "report.html")]) == 0
    files = [p for p in [*out.rglob("*"), tmp_path / "report.html"] if p.is_file()]
    assert any(p.suffix == ".pgio" for p in files) and (out / "experiment.json") in files
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p  # private like a recording (row 1)
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE((out / "runs").stat().st_mode) == 0o700
    seen = [st["query"] for r in json.loads((out / "experiment.json").read_text())["runs"] for st in r["statements"]]
    for p in files:
        if p.suffix == ".pgio":
            with Recording(p) as rec:
                seen += rec.statement_texts().values()
    seen = [q for q in seen if "alter role evil" in q]
    assert seen and all(q in ("alter role evil password '********'", "alter role evil password $1")
                        for q in seen), seen
