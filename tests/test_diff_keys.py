"""A comparison pairs statistics across runs by what they are (Stat.key: metric and statistic, a
device by its role, a statement by its whole text, a backend by its kind), never by the text shown:
runs whose labels differ still line up, and two statistics that show alike stay two rows."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from fixture_recording import write_fixture
from test_diff_fixtures import write_pair

from pgio_tui.analysis.align import window
from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.summary import summarize
from pgio_tui.store.reader import Recording


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A recording with statements and backends (PostgreSQL 18), and a copy of it."""
    folder = tmp_path_factory.mktemp("keys")
    a = write_fixture(folder / "a.pgio", n=40, major=18)
    b = folder / "b.pgio"
    shutil.copy(a, b)
    return a, b


def _edit(path, *sql: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for s in sql:
            conn.execute(s)
    conn.close()


def test_every_statistic_has_its_own_key(recorded):
    with Recording(recorded[0]) as rec:
        s = summarize(rec, window(rec, "start"))
    groups = {st.group for st in s.stats}
    assert {"statements", "backends", "devices", "writes", "latency"} <= groups
    keys = [st.key for st in s.stats]
    assert len(keys) == len(set(keys))
    assert all(st.stat for st in s.stats), [st.name for st in s.stats if not st.stat]


def test_devices_pair_by_role_whatever_the_machine_calls_them(tmp_path):
    c = compare(*write_pair(tmp_path), align="workload")
    row = c.find("disk.PGDATA.util_pct", "mean")
    assert row is c.row("devices", "PGDATA util mean")
    assert (row.metric_a, row.metric_b) == ("disk.nvme0n1.util_pct", "disk.sda.util_pct")
    assert row.a == pytest.approx(50.0) and row.b == pytest.approx(40.0)
    wal = c.find("disk.WAL.w_await_ms", "mean")
    assert (wal.metric_a, wal.metric_b) == ("disk.nvme1n1.w_await_ms", "disk.sdb.w_await_ms")
    assert all(None not in r.values for r in c.rows if r.group == "devices")


def test_statements_pair_by_text_when_their_queryid_differs(recorded, tmp_path):
    """Queryids differ between servers (table OIDs are part of them): the text says which statement."""
    a, b = recorded
    other = tmp_path / "other.pgio"
    shutil.copy(b, other)
    _edit(other, "UPDATE statements SET queryid = queryid + 1000000")
    same, moved = compare(a, b, align="start"), compare(a, other, align="start")
    rows = [r for r in moved.rows if r.key[0].startswith("statement ")]
    assert rows and [r.key for r in rows] == [r.key for r in same.rows if r.key[0].startswith("statement ")]
    assert all(r.values == same.find(*r.key).values and None not in r.values for r in rows)
    with Recording(other) as rec:
        assert min(rec.statement_texts()) > 1000000


def test_statements_that_show_alike_stay_apart(recorded, tmp_path):
    """Texts alike in the part a label shows (NAME_WIDTH): by label they were one row, by text two."""
    alike = tmp_path / "alike.pgio"
    shutil.copy(recorded[0], alike)
    _edit(alike, "UPDATE statements SET text = "
                 "'SELECT abalance, bid, filler FROM pgbench_accounts WHERE aid = $1 AND bid > 0 -- ' || queryid")
    c = compare(alike, recorded[1], align="start")
    with Recording(alike) as rec:
        s = summarize(rec, window(rec, "start"))
    calls = [st for st in s.stats if st.group == "statements" and st.stat == "calls"]
    assert len(calls) > 1 and len({st.name for st in calls}) == 1  # every label the same
    assert len({st.key for st in calls}) == len(calls)
    shown = [r for r in c.rows if r.stat == "calls" and r.name == calls[0].name]
    assert len(shown) == len(calls) and all(r.b is None for r in shown)  # B's texts are pgbench's own
