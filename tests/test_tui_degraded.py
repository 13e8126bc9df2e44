"""Degraded modes are visible in the live view: a banner at start until dismissed, a list in help,
and warnings as notifications when they happen. Real clusters, the real sampler, Pilot."""

from __future__ import annotations

import threading

import pytest
from tui_support import wait_for

from pgio_tui.sampler import Sampler
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.screens.dialogs import HelpScreen
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.degraded import DegradedBanner, WarningGate


def _text(widget) -> str:
    return str(widget.render())


@pytest.mark.asyncio
async def test_banner_lists_what_is_degraded_until_dismissed_and_help_keeps_it(make_cluster):
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE ROLE watcher LOGIN")
    sampler = Sampler(cluster.conninfo().replace("user=postgres", "user=watcher"), interval=0.5)
    sampler.open()
    try:
        session = session_from_sampler(sampler)
        feed = LiveFeed(sampler)
        app = MonitorApp(session, source=feed)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 2, timeout=20)
            banner = app.monitor.query_one("#degraded", DegradedBanner)
            text = _text(banner)
            assert banner.display
            for why in ("pg_stat_statements", "pg_monitor", "server log not readable"):
                assert why in text, text
            await pilot.pause(2)  # it stays
            assert banner.display
            await pilot.press("x")
            assert not banner.display
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), timeout=5)
            listed = _text(app.screen.query_one("#help-degraded"))
            assert "server log not readable" in listed and "pg_monitor" in listed
            await pilot.press("escape")
            await pilot.press("q")
        assert feed.wait_closed(10)
    finally:
        sampler.close()


def _make_wal(cluster, stop: threading.Event) -> None:
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS filler (i int, pad text)")
        while not stop.is_set():
            conn.execute("INSERT INTO filler SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g")


@pytest.mark.asyncio
async def test_too_frequent_checkpoints_are_notified_when_they_happen(make_cluster):
    cluster = make_cluster(max_wal_size="32MB", min_wal_size="32MB", checkpoint_warning="1h")
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    assert sampler.server.tracker.mode == "log"
    stop = threading.Event()
    filler = threading.Thread(target=_make_wal, args=(cluster, stop), daemon=True)
    try:
        feed = LiveFeed(sampler)
        app = MonitorApp(session_from_sampler(sampler), source=feed)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 1, timeout=20)
            filler.start()
            await wait_for(pilot, lambda: any("occurring too frequently" in n.message for n in app._notifications),
                           timeout=40)
            await pilot.press("q")
        assert feed.wait_closed(10)
    finally:
        stop.set()
        filler.join(20)
        sampler.close()


def test_log_read_on_the_host_for_a_pg_monitor_role(make_cluster):
    """logging_collector on, a pg_monitor role (no pg_read_server_files): root on the host reads the file."""
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE ROLE mon LOGIN IN ROLE pg_monitor")
    sampler = Sampler(cluster.conninfo().replace("user=postgres", "user=mon"), interval=0.5)
    sampler.open()
    try:
        assert not sampler.pg.features.logfile  # not through SQL
        assert sampler.pg.features.log_path == str(cluster.datadir / "log" / "postgresql.log")
        assert sampler.server.tracker.mode == "log"
    finally:
        sampler.close()


def test_a_repeated_warning_is_toasted_once_per_interval_and_then_counts_those_held_back():
    now = [0.0]
    gate = WarningGate(repeat_s=300, clock=lambda: now[0])
    seven = "checkpoints are occurring too frequently (7 seconds apart)"
    three = "checkpoints are occurring too frequently (3 seconds apart)"
    other = "server log: rotated"
    assert gate.admit([seven]) == [seven]
    now[0] = 10
    assert gate.admit([three, other]) == [other]  # the same warning with other figures: held back
    now[0] = 200
    assert gate.admit([seven]) == []
    now[0] = 301
    assert gate.admit([three]) == [three + " (2 more since it was last shown)"]
    now[0] = 700
    assert gate.admit([seven]) == [seven]  # nothing held back since: no count
