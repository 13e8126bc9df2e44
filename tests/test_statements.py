"""Top statements: sampled figures equal pg_stat_statements deltas read independently, the read
schedule keeps to its budget, and the recording keeps texts once and rows per window."""

from __future__ import annotations

import math
import sqlite3

import pytest

from fixture_recording import STATEMENT_COUNT, STATEMENT_EVERY, statement_text, synthetic_frames
from pgio_tui.frame import STATEMENT_FIELDS
from pgio_tui.sampler import Sampler
from pgio_tui.sources.statements import (BASE_CAP, MIN_READS_MS, NONE, ROWS, STATEMENT_WINDOW_S, SUMS,
                                         TICK_BUDGET_MS, StatementSchedule, StatementTracker, rest_ms)

W = round(STATEMENT_WINDOW_S)  # ticks of one statement window at 1 Hz
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder

# --- against a real server ------------------------------------------------------------------------

WORK = {  # statement -> times run in the window (the text up to the first %s starts its stored text)
    "UPDATE acct SET bal = bal - %s WHERE id = %s": 37,
    "SELECT sum(bal) FROM acct WHERE id < %s": 11,
    "INSERT INTO hist SELECT g, %s FROM generate_series(1, 50) g": 5,
}


def _independent(conn, names: tuple[str, ...]) -> dict[int, dict]:
    """pg_stat_statements read directly, per queryid of the WORK statements."""
    cols = {c for (c,) in conn.execute(
        "SELECT attname::text FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0")}
    read_time = "shared_blk_read_time" if "shared_blk_read_time" in cols else "blk_read_time"
    rows = conn.execute(
        f"SELECT queryid, sum(calls), sum(total_exec_time), "
        f"sum(calls * (stddev_exec_time ^ 2 + mean_exec_time ^ 2)), sum(rows), sum(shared_blks_hit), "
        f"sum(shared_blks_dirtied), sum({read_time}), sum(wal_bytes)::float8, min(query) "
        f"FROM pg_stat_statements WHERE {' OR '.join(['query LIKE %s'] * len(names))} GROUP BY queryid",
        [n.split("%s")[0] + "%" for n in names]).fetchall()
    keys = ("calls", "total", "sumsq", "rows", "hit", "dirtied", "read_time", "wal_bytes", "query")
    return {r[0]: {k: (v if k == "query" else float(v)) for k, v in zip(keys, r[1:])} for r in rows}


@pytest.mark.matrix
def test_statement_figures_equal_independent_pg_stat_statements_deltas(pg_cluster):
    work = pg_cluster.connect()
    work.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    work.execute("SELECT pg_stat_statements_reset()")  # entries of an earlier acct table would match too
    work.execute("DROP TABLE IF EXISTS acct, hist")
    work.execute("CREATE TABLE acct (id int PRIMARY KEY, bal int); CREATE TABLE hist (a int, b int)")
    work.execute("INSERT INTO acct SELECT g, 0 FROM generate_series(1, 1000) g")
    for sql, n in WORK.items():  # the entries exist before the window: deltas, not first counts
        work.execute(sql, (1,) * sql.count("%s"))
    names = tuple(WORK)
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        base = sampler.sample(0, 0.0)  # the baseline read of every entry
        assert sampler.server._stmt_kind & ROWS and base.statements == []
        before = _independent(work, names)
        for sql, n in WORK.items():
            for i in range(n):
                work.execute(sql, (i + 2,) * sql.count("%s"))
        after = _independent(work, names)
        frame = sampler.sample(W, float(W))  # the next read of every entry (one window at 1 Hz)
        assert sampler.server._stmt_kind & ROWS
    finally:
        sampler.close()
        work.close()
    window = frame.values["statements.window_s"]
    assert 0 < window < 30
    got = {s["queryid"]: s for s in frame.statements}
    assert len(after) == len(WORK)
    for queryid, b in after.items():
        a = before[queryid]
        s = got[queryid]
        calls = b["calls"] - a["calls"]
        assert calls == next(n for sql, n in WORK.items() if b["query"].startswith(sql.split("%s")[0]))
        assert s["calls_s"] * window == pytest.approx(calls, rel=1e-9)
        total = b["total"] - a["total"]
        assert s["time_ms_s"] * window == pytest.approx(total, rel=1e-6)
        assert s["mean_ms"] == pytest.approx(total / calls, rel=1e-6)
        var = (b["sumsq"] - a["sumsq"]) / calls - (total / calls) ** 2
        assert s["stddev_ms"] == pytest.approx(math.sqrt(max(0.0, var)), rel=1e-3, abs=1e-4)
        for fld, key in (("rows_s", "rows"), ("hit_s", "hit"), ("dirtied_s", "dirtied"),
                         ("read_time_ms_s", "read_time"), ("wal_bytes_s", "wal_bytes")):
            assert s[fld] * window == pytest.approx(b[key] - a[key], rel=1e-6, abs=1e-9), fld
    # the tick statement itself is the observer, not the workload
    assert not any("/* pgio-tui" in t for t in sampler.server.statements.texts.values())


@pytest.mark.matrix
def test_texts_come_once_and_only_changed_entries_are_returned(make_cluster):
    pg_cluster = make_cluster()  # its own: nothing else may change entries during the test
    work = pg_cluster.connect()
    work.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    for i in range(30):  # entries that stay unchanged through the test
        work.execute(f"SELECT {', '.join(['1'] * (i + 1))}")
    sampler = Sampler(pg_cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        sampler.sample(0, 0.0)
        known = len(sampler.server.statements.known()["pq"])
        work.execute("SELECT 'x' AS \"[b]x\"")  # a new entry; its alias looks like markup
        f1 = sampler.sample(W, float(W))
        returned = len(sampler.server._prev_raw["pgss_rows"] or [])
        f2 = sampler.sample(W + 1, W + 1.0)  # texts of the new top statements are read on the next tick
        work.execute("SELECT 'y' AS \"[b]x\"")
        f3 = sampler.sample(80, 80.0)  # a read at the latest after MAX_STRIDE_S (the budget is not in debt)
    finally:
        sampler.close()
        work.close()
    assert known >= 30 and returned < 10  # the unchanged entries did not come back
    mine = [s["queryid"] for s in f1.statements if round(s["calls_s"] * f1.values["statements.window_s"]) == 1]
    assert mine and not f1.statement_texts
    texts = {q: f2.statement_texts.get(q) for q in mine}
    assert any(t == 'SELECT $1 AS "[b]x"' for t in texts.values())  # plain text as the server keeps it
    assert any(s["queryid"] in texts for s in f3.statements) and not set(f3.statement_texts) & set(texts)


def _latency_reference(conn, top: str) -> tuple[dict[int, tuple[float, float]], int | None]:
    """Calls and total time per queryid of the plannable top-level statements, read directly, and
    this read's own query id (14+: read while it runs; its call shows in the next reference)."""
    own_id = ("(SELECT query_id FROM pg_stat_activity WHERE pid = pg_backend_pid())"
              if conn.info.server_version >= 140000 else "NULL::int8")
    # 13 has no query ids: the observer's statements (and this read) are left out by their marker, as
    # pgio-tui does there
    marked = "" if conn.info.server_version >= 140000 else "AND position('/* pgio-tui' in query) = 0"
    rows = conn.execute(
        f"SELECT {'/* pgio-tui ref */ ' if marked else ''}queryid, sum(calls), sum(total_exec_time), {own_id} "
        f"FROM pg_stat_statements "
        f"WHERE {top} query ~* '^\\s*(select|insert|update|delete|with)' {marked} GROUP BY queryid").fetchall()
    return {q: (float(c), float(t)) for q, c, t, _ in rows}, (rows[0][3] if rows else None)


def _delta(ref0, ref1, leave_out) -> tuple[float, float]:
    """Calls and time between two references, the observer's own statements left out."""
    calls = sum(c - ref0.get(q, (0.0, 0.0))[0] for q, (c, _) in ref1.items() if q not in leave_out)
    total = sum(t - ref0.get(q, (0.0, 0.0))[1] for q, (_, t) in ref1.items() if q not in leave_out)
    return calls, total


@pytest.mark.matrix
def test_statement_latency_from_reads_of_the_sums_and_of_every_entry(make_cluster):
    """statements.* come from whichever read the schedule made (the sums, or every entry, which
    gives the sums from the same scan): summed over the ticks they equal pg_stat_statements."""
    cluster = make_cluster()
    work = cluster.connect()
    work.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    work.execute("CREATE TABLE acct (id int PRIMARY KEY, bal int); CREATE TABLE hist (a int, b int)")
    work.execute("INSERT INTO acct SELECT g, 0 FROM generate_series(1, 1000) g")
    for sql in WORK:
        work.execute(sql, (1,) * sql.count("%s"))
    top = "toplevel AND" if work.execute(
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass "
        "AND attname = 'toplevel'").fetchone()[0] else ""
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    kinds, calls, total = [], 0.0, 0.0
    try:
        ref0, ref_id = _latency_reference(work, top)  # before the first read: this read is in its baseline
        sampler.sample(0, 0.0)
        prev_t = sampler.server._prev_raw["server_t"]
        idle = []  # calls/s of the ticks without work: the observer is not its own workload
        for tick in range(1, 100):  # 3 idle ticks, work for 10, then on until a read covers the last of it
            if tick > 13 and kinds[-1]:
                break
            for sql, n in WORK.items():
                for i in range(n // 5 + 1) if 3 < tick <= 13 else ():
                    work.execute(sql, (i + 2,) * sql.count("%s"))
            v = sampler.sample(tick, float(tick)).values
            kinds.append(sampler.server._stmt_kind)
            if not kinds[-1]:  # no read this tick (over budget): the next read covers it
                assert v["statements.calls_s"] is None
                continue
            if tick <= 3:
                idle.append(v["statements.calls_s"])
            server_t = sampler.server._prev_raw["server_t"]  # the window is from one read to the next
            calls += v["statements.calls_s"] * (server_t - prev_t)
            total += (v["statements.mean_ms"] or 0.0) * v["statements.calls_s"] * (server_t - prev_t)
            prev_t = server_t
        ref1, _ = _latency_reference(work, top)
        skipped = set(sampler.pg._skip_queryids)
        own = set(sampler.pg.own_queryids)
    finally:
        sampler.close()
        work.close()
    assert ROWS in kinds and SUMS in kinds and kinds[-1]
    # the observer's statements (tick, settings, sums, classification) and the reference's reads
    # are there and left out (on 18 they were counted while the marker led their text)
    assert (len(own) >= 4 or not sampler.pg.features.activity_query_id) and own <= skipped
    assert idle and all(c == 0 for c in idle)
    ref_calls, ref_total = _delta(ref0, ref1, own | {ref_id})
    assert calls == pytest.approx(ref_calls, rel=1e-9)
    assert total == pytest.approx(ref_total, rel=1e-6)


# --- the read schedule ----------------------------------------------------------------------------

def test_schedule_keeps_the_mean_cost_within_the_budget_as_costs_drift():
    # the rest of the tick: cheap (the reads get most of the budget), dear (a thousand backends:
    # the reads get MIN_READS_MS), and the rest growing past the budget during the run
    for sums_ms, base in ((6.0, 0.3), (1.0, 0.3), (6.0, 1.5), (1.0, None)):
        s = StatementSchedule(interval=1.0)
        assert s.kind(0) == ROWS
        s.done(0, ROWS, {SUMS: None, ROWS: None}, base_ms=0.3 if base is None else base)  # the baseline: not charged
        kinds, spent, rest, left = [], 0.0, 0.0, 0.0
        for tick in range(1, 601):
            k = s.kind(tick)
            kinds.append(k)
            cost = {SUMS: sums_ms + tick / 100 if k & SUMS else None,
                    ROWS: 8.0 + tick / 20 if k & ROWS else None}  # the server slows down
            b = tick / 400 if base is None else base  # 0 to 1.5 ms
            s.done(tick, k, cost, base_ms=b)
            spent += sum(c for c in cost.values() if c is not None)
            rest += b
            left += max(MIN_READS_MS, TICK_BUDGET_MS - b)  # what the reads may spend
        rows, sums = sum(bool(k & ROWS) for k in kinds), sum(bool(k & SUMS) for k in kinds)
        mean = (spent + rest) / len(kinds)
        if base == 0.3:  # the whole tick keeps to the target (1 ms; the last read's debt is in the mean)
            assert rows >= 5 and mean <= 1.0 and spent / len(kinds) > TICK_BUDGET_MS - base - 0.2
        elif base == 1.5:  # the reads keep to their least
            assert rows >= 2 and spent / len(kinds) <= MIN_READS_MS + 0.1  # + the last read (38 ms) / 600
        else:  # the reads give way as the rest grows (the schedule follows it smoothed: a little lag)
            assert rows >= 3 and spent / len(kinds) <= left / len(kinds) + 0.1
        assert sums >= rows if sums_ms == 1.0 else sums >= 1
    cheap = StatementSchedule(interval=1.0)
    cheap.kind(0)
    cheap.done(0, ROWS, {SUMS: 0.0, ROWS: 0.3})
    kinds = []
    for tick in range(1, 2 * W + 1):
        kinds.append(cheap.kind(tick))
        cheap.done(tick, kinds[-1], {SUMS: 0.2, ROWS: 0.3})
    assert kinds == ([SUMS] * (W - 1) + [ROWS]) * 2  # sums every tick, rows (with the sums) every window
    assert StatementSchedule(interval=1.0, enabled=False).kind(0) == NONE


def test_schedule_counts_the_periodic_dear_tick_but_not_an_odd_one():
    """With many processes every 5th tick also reads pg_stat_activity (0.28 ms the others, 1.0 ms
    those: the rest's mean 0.42, its median 0.28). The reads earn what the mean leaves, so the whole
    tick keeps to the budget (a median would give them 0.62 ms a tick and the whole 1.04 ms); one
    tick the machine descheduled (30 ms) is counted at most BASE_CAP times the median."""
    assert rest_ms([0.28] * 4 + [1.0]) == pytest.approx(0.424)
    assert rest_ms([0.28] * 29 + [30.0]) == pytest.approx((0.28 * 29 + BASE_CAP * 0.28) / 30)
    s = StatementSchedule(interval=1.0)
    s.kind(0)
    s.done(0, ROWS, {SUMS: None, ROWS: None}, base_ms=0.28)
    spent = rest = 0.0
    for tick in range(1, 1201):
        k = s.kind(tick)
        cost = {SUMS: 20.0 if k & SUMS else None, ROWS: 30.0 if k & ROWS else None}  # 20,000 entries
        b = 1.0 if tick % 5 == 0 else 0.28
        s.done(tick, k, cost, base_ms=b)
        spent += sum(c for c in cost.values() if c is not None)
        rest += b
    mean = (spent + rest) / 1200
    assert TICK_BUDGET_MS - 0.1 <= mean <= TICK_BUDGET_MS + 0.05, mean  # the last read's debt: 30 ms / 1200
    assert spent / 1200 >= 0.3  # the reads still earn most of what is left


def test_tracker_evictions_and_resets_never_give_negative_figures():
    t = StatementTracker(top=5)
    row = lambda q, calls, total: [q, 10, 5, True, calls, total, total * total / calls, calls,
                                    0, 0, 0, 0, 0.0, 0.0, 0, 0.0]
    assert t.update([row(1, 100, 50.0), row(2, 10, 5.0)], 5.0) == []  # baseline
    t.known()
    top = t.update([row(1, 110, 60.0), row(2, 3, 1.0)], 5.0)  # 2 was evicted and came back
    got = {s["queryid"]: s for s in top}
    assert got[1]["calls_s"] == pytest.approx(2.0) and got[1]["mean_ms"] == pytest.approx(1.0)
    assert got[2]["calls_s"] == pytest.approx(0.6) and all(v is None or v >= 0 for v in got[2].values())
    t.update([[2, 10, 5, True, *[None] * 12]], 5.0)  # vanished
    assert 2 not in {k[0] for k in t._entries} and t.sums()["calls"] == 110


# --- the recording ----------------------------------------------------------------------------------

def test_recording_keeps_texts_once_and_rows_per_window(tmp_path):
    frames = list(synthetic_frames(31, incidents=False))
    path = tmp_path / "s.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in frames:
            rec.write(f)
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT count(*), count(text) FROM statements").fetchone() == (STATEMENT_COUNT,) * 2
        assert c.execute("SELECT count(*) FROM statement_stats").fetchone()[0] == STATEMENT_COUNT * (30 // STATEMENT_EVERY)
        mean, = c.execute(f"SELECT mean_ms FROM statement_stats_named WHERE tick = {STATEMENT_EVERY} "
                          "AND queryid = 1000").fetchone()
        assert 0.2 < mean < 1
    with Recording(path) as rec:
        assert rec.statement_texts()[1005] == statement_text(5)  # kept as the server sent it
        for f in frames:
            if not f.statements:
                assert rec.frame(f.tick).statements == []
                continue
            back = {s["queryid"]: s for s in rec.frame(f.tick).statements}
            for s in f.statements:
                for fld in STATEMENT_FIELDS:
                    assert back[s["queryid"]][fld] == pytest.approx(s[fld], rel=1e-3, abs=2e-3), fld
        totals = rec.statement_totals()
    first = [f.statements[0] for f in frames if f.statements]
    calls = sum(round(s["calls_s"] * STATEMENT_EVERY) for s in first)
    assert totals[1000]["calls"] == calls
    assert totals[1000]["mean_ms"] == pytest.approx(
        sum(s["time_ms_s"] * STATEMENT_EVERY for s in first) / calls, rel=1e-4)


# --- diff and report ----------------------------------------------------------------------------------

def test_diff_has_per_statement_rows_matching_the_recordings(tmp_path):
    from fixture_recording import write_fixture

    from pgio_tui.analysis.compare import compare
    from pgio_tui.analysis.formats import render

    a, b = write_fixture(tmp_path / "a.pgio", n=120), write_fixture(tmp_path / "b.pgio", n=120, seed=3)
    c = compare(a, b)
    rows = c.groups()["statements"]
    assert len(rows) % 3 == 0 and 30 <= len(rows) <= 60  # the top 10 of each run, matched by text
    with Recording(a) as ra, Recording(b) as rb:
        ta = ra.statement_totals(c.a.window.start_tick, c.a.window.end_tick)
        tb = rb.statement_totals(c.b.window.start_tick, c.b.window.end_tick)
    update = statement_text(0)[:59] + "…"
    calls = c.row("statements", f"{update} · calls")
    mean = c.row("statements", f"{update} · mean")
    assert (calls.a, calls.b) == (ta[1000]["calls"], tb[1000]["calls"])
    assert mean.a == pytest.approx(ta[1000]["mean_ms"]) and mean.change_pct == pytest.approx(
        100 * (tb[1000]["mean_ms"] / ta[1000]["mean_ms"] - 1))
    table = render(c, "table", 200)
    assert "SELECT [bold red]not markup[/] FROM t WHERE x = $1 \\x1b[31m · calls" in table  # plain, ESC shown
    assert "\x1b" not in render(c, "markdown") and "\x1b" not in render(c, "csv")
