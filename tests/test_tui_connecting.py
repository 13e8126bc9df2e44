"""The live monitor paints before its server answers (issue 28): header and panes while the sampler
is opened on a thread, then the session filled in, the first rates a quarter of a second after the
first tick, the degraded banner once the notes are known; a failed connection ends the app and is
raised. Real cluster, real sampler, Pilot."""

from __future__ import annotations

import threading
import time

import pytest
from tui_support import wait_for

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.errors import ConnectError
from pgio_tui.session import open_sampler
from pgio_tui.tui.feed import EARLY_TICK_S, PAINT_WAIT_S, Connecting
from pgio_tui.tui.live import connecting_app
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.degraded import DegradedBanner
from pgio_tui.tui.widgets.status import SHORT_RATES, StatusBar


@pytest.mark.asyncio
async def test_the_monitor_paints_then_connects_and_shows_rates_at_once(make_cluster):
    cluster = make_cluster()
    with cluster.connect() as conn:
        conn.execute("CREATE ROLE watcher LOGIN")  # no pg_monitor: a note, and so a banner, once connected
    go = threading.Event()

    def slow_open():
        go.wait(30)
        return open_sampler(cluster.conninfo().replace("user=postgres", "user=watcher"), 1.0, None)

    connecting = Connecting(slow_open)
    session = SessionInfo(source="live", interval=1.0)
    app = connecting_app(connecting, session)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.monitor is not None and app.monitor.panes)
            await pilot.pause()
            header = StatusBar.line(app.monitor.view(), app.state, 120)
            assert "connecting…" in "".join(text for text, _ in header)
            assert len(app.history) == 0 and not app.monitor.query(DegradedBanner)
            go.set()
            await wait_for(pilot, lambda: len(app.history) >= 2, timeout=20)
            t, tps = app.history.t, app.history.series[M.LATENCY_TPS]
            assert EARLY_TICK_S <= t[1] - t[0] < 0.9  # the rates' tick, not a second later
            assert tps[0] is None and tps[1] is not None
            assert session.server_version and app.state.detail == ""
            await wait_for(pilot, lambda: bool(app.monitor.query(DegradedBanner)))
            assert "pg_monitor" in str(app.monitor.query_one(DegradedBanner).render())
            await pilot.press("q")
    finally:
        connecting.close()


@pytest.mark.asyncio
async def test_a_failed_connection_ends_the_app_and_is_raised(tmp_path):
    connecting = Connecting(lambda: open_sampler(f"host={tmp_path} dbname=nothing connect_timeout=2", 1.0, None))
    app = connecting_app(connecting, SessionInfo(source="live"))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.return_code is not None or not app.is_running, timeout=20)
        with pytest.raises(ConnectError, match="cannot connect"):
            connecting.wait()
    finally:
        connecting.close()


@pytest.mark.asyncio
async def test_after_paint_the_connection_waits_for_the_monitors_first_paint(pg_cluster):
    """The live command's way (commands/live.py): the thread starts at once but opens the sampler
    only once the header and panes are on screen; the early tick's rates then say what they span."""
    opened: list[float] = []
    painted: list[float] = []

    def open_now():
        opened.append(time.monotonic())
        return open_sampler(pg_cluster.conninfo(), 1.0, None)

    connecting = Connecting(open_now, after_paint=True)
    time.sleep(0.3)
    assert not opened  # nothing painted yet: not connected
    app = connecting_app(connecting, SessionInfo(source="live", interval=1.0))
    painted_once = connecting.ui_painted

    def ui_painted():
        painted.append(time.monotonic())
        painted_once()

    connecting.ui_painted = ui_painted
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 2, timeout=20)
            assert painted and opened and painted[0] <= opened[0] < painted[0] + PAINT_WAIT_S
            early = app.history.last
            header = "".join(text for text, _ in StatusBar.line(app.monitor.view(), app.state, 120))
            if len(app.history) == 2:  # the early tick is still the newest
                said = f"rates over {fmt.ms(early.dt * 1000)} ms"
                assert (said in header) == (early.dt <= SHORT_RATES), header
            await wait_for(pilot, lambda: len(app.history) >= 3, timeout=20)
            header = "".join(text for text, _ in StatusBar.line(app.monitor.view(), app.state, 120))
            assert "rates over" not in header  # a whole interval
            await pilot.press("q")
    finally:
        connecting.close()


def test_ended_before_the_paint_it_never_connects():
    """An app that ends before its first paint (q at once, an error) neither connects nor waits for
    PAINT_WAIT_S to end."""
    opened = []
    connecting = Connecting(lambda: opened.append(1), after_paint=True)
    t0 = time.monotonic()
    connecting.cancel()
    assert connecting.wait(5) is None and time.monotonic() - t0 < 1
    connecting.close()
    assert not opened and connecting.feed is None and connecting.error is None
