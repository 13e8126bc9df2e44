"""The workload dialog (w) and quitting with a workload running.

Dialog behaviour (open, bad values said in one line, cancel, one workload at a time) runs on the
synthetic feed; starting pgbench for real, its latency in the Latency pane, its start/stop marks on
the charts, and `q` mid-run keeping pgbench's summary in the recording run on a lab cluster.
"""

from __future__ import annotations

import uuid

import pytest
from textual.widgets import Input, Label, TabbedContent
from tui_support import FakeSampler, StubWorkload, text_of, wait_for

from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.screens.dialogs import ConfirmScreen
from pgio_tui.tui.screens.workload_dialog import WorkloadScreen
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.lines import LinesView
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.launch import pgbench_args, pgio_options


def live_app(sampler, tmp_path, *, record_path=None, workload=None) -> MonitorApp:
    feed = LiveFeed(sampler, record_path=record_path, workload=workload)
    return MonitorApp(session_from_sampler(sampler), source=feed, workload=workload,
                      recordings_dir=str(tmp_path / "recordings"))


def error_of(screen: WorkloadScreen) -> str:
    return str(screen.query_one("#wl-error", Label).render())


# --- the fields, without Textual ----------------------------------------------------------------


def test_pgbench_fields_to_argv():
    args, init = pgbench_args({"clients": "8", "threads": "2", "duration": "30", "init_scale": "",
                               "builtin": "select-only", "extra": "-M prepared --rate '500'"})
    assert args == ["-c", "8", "-j", "2", "-T", "30", "-b", "select-only", "-M", "prepared", "--rate", "500"]
    assert init is None
    with pytest.raises(WorkloadError, match="threads .4. must not exceed clients .2."):
        pgbench_args({"clients": "2", "threads": "4", "duration": "5"})
    with pytest.raises(WorkloadError, match="extra args: No closing quotation"):
        pgbench_args({"clients": "1", "threads": "1", "duration": "5", "extra": "-f 'x.sql"})


def test_strip_says_the_phase():
    from types import SimpleNamespace as NS

    from pgio_tui.tui.widgets.status import WorkloadStrip

    def said(**kw) -> str:  # a workload's state as the strip reads it (WorkloadLike)
        return "".join(t for t, _ in WorkloadStrip.state(NS(**{"phase": "run", "progress": None, "error": None, **kw})))

    assert said(running=True, phase="setup", progress=0.42) == "◔ setting up 42%  s: stop"
    assert said(running=True, phase="setup", progress=None) == "◔ setting up  s: stop"
    assert said(running=True, phase="stopping") == "◼ stopping…"
    assert said(running=True, phase="run") == "▶ running  s: stop"
    assert said(running=False, error="pgbench: invalid option") == "✗ failed: pgbench: invalid option"
    assert said(running=False) == "■ finished"


def test_pgio_fields():
    opts = pgio_options({"schemas": "2", "scale": "64M", "sessions": "3", "run_time": "10", "update_pct": "0",
                         "work_unit": "255", "setup": False})
    assert opts["schemas"] == 2 and opts["run_time"] == 10.0 and opts["setup"] is False
    with pytest.raises(WorkloadError, match="update %: must be 0 or more"):
        pgio_options({"schemas": "1", "sessions": "1", "run_time": "1", "update_pct": "-1", "work_unit": "1"})
    with pytest.raises(WorkloadError, match="update-pct 60: pgio allows 0, 1-50 or 100"):
        pgio_options({"schemas": "1", "scale": "64M", "sessions": "1", "run_time": "1", "update_pct": "60",
                      "work_unit": "1"})


# --- the dialog on the synthetic feed -----------------------------------------------------------


@pytest.mark.asyncio
async def test_dialog_opens_validates_and_cancels(tmp_path):
    app = live_app(FakeSampler(), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 2)
        await pilot.press("w")
        screen = app.screen
        assert isinstance(screen, WorkloadScreen) and screen.active_kind == "pgbench"
        screen.query_one("#wl-clients", Input).value = "many"
        await pilot.press("enter")
        assert app.screen is screen and error_of(screen) == "clients: give a whole number, not 'many'"
        screen.query_one("#wl-clients", Input).value = "4"
        screen.query_one("#wl-duration", Input).value = "0"
        await pilot.press("enter")
        assert error_of(screen) == "duration (s): must be 1 or more"
        screen.query_one(TabbedContent).active = "pgio"
        await pilot.pause()
        screen.query_one("#wl-scale", Input).value = "1M"
        screen.query_one("#wl-scale", Input).focus()
        await pilot.press("enter")
        assert "pgio needs at least 1024" in error_of(screen)
        screen.query_one("#wl-scale", Input).value = "64M"
        await pilot.press("enter")  # every field right: only the fake sampler has no server to launch on
        assert error_of(screen) == "no connection to launch a workload on"
        await pilot.press("escape")
        assert app.screen is app.monitor and app.workload is None
        await pilot.press("w")  # the values typed are kept for next time
        assert app.screen.active_kind == "pgio" and app.screen.query_one("#wl-scale", Input).value == "64M"
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Start workload…" in titles


@pytest.mark.asyncio
async def test_one_workload_at_a_time(tmp_path):
    workload = StubWorkload()
    app = live_app(FakeSampler(), tmp_path, workload=workload)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 2)
        await pilot.press("w")
        assert app.screen is app.monitor
        assert any("one at a time" in n.message for n in app._notifications)


# --- for real: pgbench on a lab cluster ---------------------------------------------------------


def fresh_db(cluster) -> str:
    name = f"tuiw_{uuid.uuid4().hex[:8]}"
    with cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def open_sampler(cluster, db: str):
    from pgio_tui.sampler import Sampler
    sampler = Sampler(cluster.conninfo(db), interval=0.5)
    sampler.open()
    return sampler


async def start_from_dialog(pilot, app, **values) -> None:
    await pilot.press("w")
    screen = app.screen
    assert isinstance(screen, WorkloadScreen)
    for key, value in values.items():
        screen.query_one(f"#wl-{key}", Input).value = value
    screen.query_one("#wl-clients", Input).focus()
    await pilot.press("enter")
    assert app.screen is app.monitor, error_of(screen)


@pytest.mark.asyncio
async def test_start_pgbench_from_the_dialog_see_its_latency_stop_it(pg_cluster, tmp_path):
    sampler = open_sampler(pg_cluster, fresh_db(pg_cluster))
    path = tmp_path / "w.pgio"
    try:
        app = live_app(sampler, tmp_path, record_path=str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.source.recording is not None, timeout=20)
            await start_from_dialog(pilot, app, clients="2", threads="1", duration="3", init_scale="1")
            w = app.workload
            assert w is not None and w.kind == "pgbench" and w.argv[-9:-1] == ["-c", "2", "-j", "1", "-T", "3",
                                                                               "-b", "tpcb-like"]  # then the conninfo
            strip = app.monitor.query_one("#workload", LinesView)
            assert strip.display
            await wait_for(pilot, lambda: (app.history.latest("latency.tps") or 0) > 0
                           and app.history.has("latency.p50_ms"), timeout=60)
            latency = app.monitor.query_one("#latency")
            await wait_for(pilot, lambda: "workload log" in str(latency.border_subtitle), timeout=5)
            assert "pgbench" in text_of(strip)
            await pilot.pause(1.5)  # start and stop more than a column apart on a 1-minute axis
            if w.running:
                await pilot.press("s")
                assert isinstance(app.screen, ConfirmScreen)
                await pilot.press("y")
            assert w.wait(20)
            await wait_for(pilot, lambda: w.done, timeout=10)
            # done = the stop went into a sampled frame; the app's history has it one delivery later
            await wait_for(pilot, lambda: "workload_stop" in [e.event.kind for e in app.history.events], timeout=10)
            assert "workload_start" in [e.event.kind for e in app.history.events]
            await pilot.press(*["plus"] * 8, *["minus"] * 3)  # in to 10 s, out to a 1-minute window:
            # start and stop in columns of their own
            assert app.monitor.window_s == 60
            await pilot.pause(0.6)
            for pane in ("writes", "memory", "latency"):  # the time axis of every chart marks both
                axis = app.monitor.query_one(f"#{pane}").section_text("chart").splitlines()[-1]
                assert "▶" in axis and "■" in axis, (pane, axis, [(e.event.kind, e.t) for e in app.history.events], app.history.end_t)
            await wait_for(pilot, lambda: "finished" in text_of(strip) or "failed" in text_of(strip))
            await pilot.press("q")
        assert app.source.wait_closed(15)
    finally:
        sampler.close()
    with Recording(path) as rec:
        (row,) = rec.workloads()
        assert row["kind"] == "pgbench" and row["exit_code"] is not None
        assert not (row["summary"] or {}).get("partial")
        assert [e.event.kind for e in rec.events(["workload_start", "workload_stop"])] == \
            ["workload_start", "workload_stop"]


@pytest.mark.asyncio
async def test_quit_mid_run_keeps_the_summary(pg_cluster, tmp_path):
    sampler = open_sampler(pg_cluster, fresh_db(pg_cluster))
    path = tmp_path / "q.pgio"
    try:
        app = live_app(sampler, tmp_path, record_path=str(path))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.source.recording is not None, timeout=20)
            await start_from_dialog(pilot, app, clients="2", threads="1", duration="60", init_scale="1")
            w = app.workload
            await wait_for(pilot, lambda: w.phase == "run" and app.history.has("latency.p50_ms"), timeout=60)
            await pilot.press("q")
            assert app.state.detail == "stopping workload…"
            await wait_for(pilot, lambda: not app.is_running, timeout=20)
        assert app.source.wait_closed(15)
    finally:
        sampler.close()
    assert w.finished
    with Recording(path) as rec:
        (row,) = rec.workloads()
        s = row["summary"]
        assert row["exit_code"] is not None and s and not s.get("partial")
        assert s["interrupted"] is True and s["measured"]["transactions"] > 0
        assert [e.event.kind for e in rec.events(["workload_stop"])] == ["workload_stop"]


@pytest.mark.asyncio
async def test_start_pgio_from_the_dialog(pg_cluster, tmp_path):
    sampler = open_sampler(pg_cluster, fresh_db(pg_cluster))
    try:
        app = live_app(sampler, tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 1, timeout=20)
            await pilot.press("w")
            screen = app.screen
            screen.query_one(TabbedContent).active = "pgio"
            await pilot.pause()
            for key, value in {"scale": "8M", "sessions": "1", "run_time": "2"}.items():
                screen.query_one(f"#wl-{key}", Input).value = value
            screen.query_one("#wl-scale", Input).focus()
            await pilot.press("enter")
            assert app.screen is app.monitor, error_of(screen)
            w = app.workload
            assert w.kind == "pgio" and "--setup" in w.argv
            strip = app.monitor.query_one("#workload", LinesView)
            seen: set[str] = set()

            def ended() -> bool:
                seen.add(text_of(strip).splitlines()[0] if text_of(strip) else "")
                return w.done

            await wait_for(pilot, ended, timeout=60)
            await wait_for(pilot, lambda: "finished" in text_of(strip), timeout=10)  # shown a delivery later
            assert any("running" in s for s in seen), seen
            assert app.history.has("latency.p50_ms")  # its statements' latency reached the Latency pane
            assert w.exit_code == 0 and w.summary and w.summary.get("riops") is not None, w.summary
            await pilot.press("q")
        assert app.source.wait_closed(15)
    finally:
        sampler.close()
