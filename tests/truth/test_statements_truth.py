"""Truth: top statements' calls and texts against pg_stat_statements read by hand.

The statement text cache asks for a queryid's text once; the changes that defeat it are run
mid-run: statements that appear after the start, a pg_stat_statements_reset(), and deallocation
(pg_stat_statements.max entries: the least used are evicted and come back). Ticks are driven by
hand so that every call falls in a known window between two reads of every entry.

Tolerance: calls exact (both sides count the same executions; the workload runs between reads,
never during one); texts exact: the text pg_stat_statements gave that queryid at a read by hand
during the run. The observer keeps the first text it read; after a reset or an eviction the
extension may make the entry again from a prepared statement's source text (`x > 1` where it
had `x > $1`), the same statement: the first text, with its constants out, is kept.
A window with a reset in it has no figures (counters that started over cannot be told from ones
that went on), so the calls before the reset in that window are not counted: the reference says so.
"""

from __future__ import annotations

import pytest

from pgio_tui.sampler import Sampler
from pgio_tui.sources.statements import STATEMENT_WINDOW_S

# metric -> reference kind (metrics.REFERENCE_KINDS): pg_stat_statements read by hand for the calls
# and the texts, pg_stat_activity for the observer's own statements (`statements.*`: not catalog keys)
CHECKS = {"statement.<queryid>.calls_s": "view", "statements.text": "view", "statements.own_left_out": "view"}
pytestmark = pytest.mark.matrix  # version-sensitive: scripts/pg-matrix.sh runs it on 13-18
WINDOW_TICKS = int(STATEMENT_WINDOW_S)  # interval 1 s: every entry is read every 10 ticks


def _pgss(admin) -> dict[int, tuple[int, str]]:
    """Top-level entries (13 has no `toplevel` column: with the default track = top it keeps only those)."""
    top = admin.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass "
                        "AND attname = 'toplevel'").fetchone()[0]
    return {q: (c, t) for q, c, t in admin.execute(
        "SELECT queryid, calls, query FROM pg_stat_statements" + (" WHERE toplevel" if top else ""))}


def test_statement_calls_and_texts_follow_new_statements_resets_and_deallocation(make_cluster):
    cluster = make_cluster(**{"pg_stat_statements.max": "100"})
    admin = cluster.connect(autocommit=True)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    if admin.info.server_version < 140000:
        admin.close()
        pytest.skip("13 has no pg_stat_statements_info: a reset shows only as counters going back "
                    "(that window unknown), not as a new baseline")
    work = cluster.connect(autocommit=True)
    work.execute("CREATE TABLE truth_a (x int)")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()

    def a():  # the statement there all along
        work.execute("SELECT count(*) FROM truth_a WHERE x > 1")

    def b():  # one that first runs mid-run
        work.execute("INSERT INTO truth_a VALUES (7)")

    def crowd(n):  # distinct statements that push out the least used (deallocation)
        for i in range(n):
            work.execute("SELECT " + ", ".join(["1"] * (i + 2)))

    plan = {range(1, 10): [(a, 30)],  # window 1: A only
            range(11, 15): [(a, 5), (b, 40)],  # window 2: B new; then a reset, then fewer calls
            range(15, 20): [(a, 3), (b, 2)],
            range(21, 30): [(a, 4), (b, 6)]}  # window 3: after deallocations
    texts: dict[int, str] = {}
    pgss_texts: dict[int, set[str]] = {}  # queryid -> the texts pg_stat_statements gave it
    windows: list[dict[int, int]] = []
    hand: list[dict[int, int]] = []
    before = {}
    try:
        for tick in range(31):
            if tick == 15:
                admin.execute("SELECT pg_stat_statements_reset()")
            if tick == 20:
                crowd(150)
            seen = _pgss(admin)
            for q, (_, t) in seen.items():
                pgss_texts.setdefault(q, set()).add(t)
            calls_before = seen if tick % WINDOW_TICKS == 1 else None
            for ticks, runs in plan.items():
                if tick in ticks:
                    for fn, n in runs:
                        for _ in range(n):
                            fn()
            if calls_before is not None:
                before = calls_before
            sampler.server.final = tick == 30
            frame = sampler.sample(tick, float(tick))
            texts.update(frame.statement_texts)
            if frame.statements:
                windows.append({s["queryid"]: round(s["calls_s"] * frame.values["statements.window_s"])
                                for s in frame.statements})
                now = _pgss(admin)
                hand.append({q: c - (before.get(q, (0,))[0] if before.get(q, (0,))[0] <= c else 0)
                             for q, (c, _) in now.items()})
        ref = _pgss(admin)
        info = (admin.execute("SELECT dealloc FROM pg_stat_statements_info").fetchone()[0]  # 14+
                if admin.execute("SELECT to_regclass('pg_stat_statements_info')").fetchone()[0] else None)
    finally:
        sampler.close()
        work.close()
        admin.close()
    assert info is None or info > 0, "no deallocation happened: the run does not test it"  # 13 cannot say
    qa = next(q for q, (_, t) in ref.items() if t.startswith("SELECT count(*) FROM truth_a"))
    qb = next(q for q, (_, t) in ref.items() if t.startswith("INSERT INTO truth_a"))
    # windows: 10 (A 270), 20 (the reset: no figures), 30 (A 36, B 54)
    assert len(windows) == 2, windows
    assert windows[0][qa] == hand[0][qa] == 270
    assert windows[1][qa] == hand[1][qa] == 36 and windows[1][qb] == hand[1][qb] == 54
    # every statement shown got its text, and it is pg_stat_statements' own
    shown = {q for w in windows for q in w}
    assert shown <= set(texts), shown - set(texts)
    for q in shown:
        assert texts[q] in pgss_texts[q], (q, texts[q], pgss_texts[q])


def test_texts_arrive_for_statements_seen_in_the_last_window(make_cluster):
    """A statement first picked on a run's last tick still gets its text (no later tick would)."""
    cluster = make_cluster()
    admin = cluster.connect(autocommit=True)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    admin.execute("CREATE TABLE truth_late (x int)")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    texts: dict[int, str] = {}
    shown: set[int] = set()
    try:
        for tick in range(WINDOW_TICKS + 1):
            if tick == WINDOW_TICKS:
                for _ in range(20):
                    admin.execute("SELECT count(*) FROM truth_late")
            sampler.server.final = tick == WINDOW_TICKS
            frame = sampler.sample(tick, float(tick))
            texts.update(frame.statement_texts)
            shown |= {s["queryid"] for s in frame.statements}
        ref = _pgss(admin)
    finally:
        sampler.close()
        admin.close()
    late = next(q for q, (_, t) in ref.items() if "truth_late" in t and t.startswith("SELECT"))
    assert late in shown and texts.get(late) == ref[late][1]


def test_the_observer_leaves_out_what_it_ran_and_nothing_a_role_marks(make_cluster):
    """Issue 22 item 9 / issue 21 row 7: the observer's own statements are never top statements
    (the reference: the query ids pg_stat_activity shows for its backend, read by hand after each
    tick), and a statement another role starts with the observer's marker comment is one."""
    cluster = make_cluster()
    admin = cluster.connect(autocommit=True)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    admin.execute("CREATE ROLE hider LOGIN")
    hider = cluster.connect(autocommit=True, user="hider")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    pid = sampler.pg.conn.info.backend_pid
    ran: set[int] = set()  # the observer's query ids, as pg_stat_activity shows them
    shown: dict[int, int] = {}
    try:
        if not sampler.pg.features.activity_query_id:
            pytest.skip("no query ids before PostgreSQL 14: the marker of the observer's own role is used")
        for tick in range(WINDOW_TICKS + 1):
            if tick:
                for _ in range(30):
                    hider.execute("SELECT /* pgio-tui tick */ pg_sleep(0.0), 1")
            frame = sampler.sample(tick, float(tick))
            q = admin.execute("SELECT query_id FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]
            ran.add(q)
            for s in frame.statements:
                shown[s["queryid"]] = round(s["calls_s"] * frame.values["statements.window_s"])
        marked = admin.execute("SELECT queryid, calls FROM pg_stat_statements WHERE query LIKE %s",
                               ("%pg_sleep($1), $2%",)).fetchall()
    finally:
        sampler.close()
        hider.close()
        admin.close()
    assert ran and ran <= sampler.pg.own_queryids and not (ran & set(shown)), (ran, shown)
    (qid, calls), = marked
    assert shown.get(qid) == calls == 30 * WINDOW_TICKS  # the marked statement counted, every call


def test_an_experiments_server_statements_leave_out_what_pgio_tui_ran_only(make_cluster):
    """The statements an experiment reads at a run's end (the workload's database and role): the
    ones this process ran (by query id) are marked own and left out of the report; a statement of
    another connection of the same role, with the marker in its text, stays."""
    from types import SimpleNamespace

    from pgio_tui.experiments.hygiene import statements_after
    from pgio_tui.experiments.results import server_statements
    from pgio_tui.sources.pgfeatures import own, run_own
    cluster = make_cluster()
    with cluster.connect(autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        admin.execute("CREATE ROLE hider LOGIN")
        if admin.info.server_version < 140000:
            pytest.skip("no query ids before PostgreSQL 14")
        admin.execute("SELECT pg_stat_statements_reset()")
        for _ in range(5):
            run_own(admin, "truth", own("truth", "SELECT count(*) FROM pg_class"))
    with cluster.connect(autocommit=True) as hider:  # not this process's statement, whatever its text
        for _ in range(7):
            hider.execute("SELECT /* pgio-tui tick */ count(*) FROM pg_attribute")
    rows = statements_after(cluster.conninfo())
    shown = server_statements(SimpleNamespace(statements=rows)) or {}
    assert any("pg_attribute" in q and v["calls"] == 7 for q, v in shown.items()), shown
    assert not any("pg_class" in q for q in shown), shown
    assert any(r["own"] and "pg_class" in r["query"] for r in rows), rows
