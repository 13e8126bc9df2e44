"""Behaviour of the live TUI driven by Pilot: keys, pause, recording on/off, annotation, resize.

The feed is the real LiveFeed (thread worker, post_message, Recorder on the feed's thread) on a
duck-typed sampler that yields synthetic frames every 50 ms, so these tests need no PostgreSQL.
"""

from __future__ import annotations

import pytest
from textual import events
from tui_support import FakeSampler, StubWorkload, text_of, wait_for

from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.screens.dialogs import ConfirmScreen, HelpScreen, PromptScreen
from pgio_tui.tui.screens.monitor import WINDOWS, MonitorScreen, fitted_window
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.lines import LinesView

pytestmark = pytest.mark.asyncio


def live_app(tmp_path, sampler=None, *, record_path=None, workload=None) -> MonitorApp:
    sampler = sampler or FakeSampler()
    feed = LiveFeed(sampler, record_path=record_path, workload=workload)
    return MonitorApp(session_from_sampler(sampler), source=feed, workload=workload,
                      recordings_dir=str(tmp_path / "recordings"))


def monitor(app) -> MonitorScreen:
    return app.monitor


async def test_keys_switch_panes_zoom_theme_help(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        scr = monitor(app)
        assert scr.layout_name == "compact"
        visible = lambda: [p.id for p in scr.panes if p.display and not p.has_class("-hidden")]  # noqa: E731
        assert visible() == ["checkpoint"]
        await pilot.press("4")
        assert visible() == ["devices"] and scr.active == 3
        await pilot.press("tab")
        assert visible() == ["latency"]
        await pilot.press("shift+tab", "shift+tab")
        assert visible() == ["memory"]
        await pilot.press("6")
        assert visible() == ["waits"]
        w = WINDOWS.index(scr.window_s)  # a session shorter than 5 min: fitted to it
        assert scr.fitted and scr.window_s == fitted_window(scr.span()) < 300
        await pilot.press("plus")
        assert scr.window_s == WINDOWS[max(0, w - 1)] and not scr.fitted
        await pilot.press("minus", "minus", "minus")
        assert scr.window_s == WINDOWS[max(0, w - 1) + 3]
        before = app.theme
        await pilot.press("t")
        assert app.theme != before
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = dict(app.screen.keys)  # generated from the live bindings: every live key is there
        assert keys["r"].startswith("start / stop recording") and keys["w"].startswith("start a workload")
        assert keys["space"].startswith("pause the display") and keys["+/-"].startswith("zoom")
        await pilot.press("escape")
        assert app.screen is scr
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "q")
    assert app.return_code == 0
    assert app.source.wait_closed(5)


async def test_pause_freezes_the_display_not_the_sampling(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 5)
        scr = monitor(app)
        pane = scr.query_one("#writes")
        await pilot.press("space")
        assert scr.paused
        assert "PAUSED" in text_of(scr.query_one("#status", LinesView))
        frozen, n = pane.section_text("chart"), len(app.history)
        await wait_for(pilot, lambda: len(app.history) >= n + 8)
        await pilot.pause(0.3)
        assert pane.section_text("chart") == frozen  # frames keep arriving, the charts stand still
        await pilot.press("space")
        assert not scr.paused
        await wait_for(pilot, lambda: pane.section_text("chart") != frozen)
        assert "PAUSED" not in text_of(scr.query_one("#status", LinesView))


async def test_recording_on_and_off(tmp_path):
    workload = StubWorkload()
    app = live_app(tmp_path, workload=workload)
    path = tmp_path / "rec" / "session.pgio"
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 2)
        await pilot.press("r")
        assert isinstance(app.screen, PromptScreen)
        prompt = app.screen.query_one("#prompt-input")
        assert prompt.value.startswith(str(tmp_path / "recordings")) and prompt.value.endswith(".pgio")
        prompt.value = str(path)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.state.recording == str(path))
        await wait_for(pilot, lambda: app.state.recorded_ticks >= 5)
        status = monitor(app).query_one("#status", LinesView)
        await wait_for(pilot, lambda: "● REC session.pgio" in text_of(status))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.state.recording is None)
        await wait_for(pilot, lambda: "not recording" in text_of(status))
        await pilot.press("q")
    assert app.source.wait_closed(5)
    assert workload.recorders[0] is not None and workload.recorders[-1] is None  # told on start and stop
    with Recording(path) as rec:
        assert rec.tick_count >= 5
        kinds = [e.event.kind for e in rec.events()]
        assert kinds[-1] == "stop"
        assert rec.settings()["checkpoint_timeout"].value in ("300", 300)


async def test_annotation_goes_into_the_next_frame_and_the_recording(tmp_path):
    path = tmp_path / "annotated.pgio"
    app = live_app(tmp_path, record_path=str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.state.recorded_ticks >= 2)
        await pilot.press("m")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"raised clients to 64")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(e.event.kind == "annotation" for e in app.history.events))
        scr = monitor(app)
        await pilot.pause(0.4)
        assert "▲" in scr.query_one("#checkpoint").section_text("chart")  # marked on the time axis
        await pilot.press("q")
    assert app.source.wait_closed(5)
    with Recording(path) as rec:
        notes = [e for e in rec.events(["annotation"])]
    assert [e.event.text for e in notes] == ["raised clients to 64"]


async def test_a_click_on_a_tab_shows_its_pane(tmp_path):
    """The compact layout's tabs (one widget, widgets/pane_tabs.py): a click on a label, or on the
    bar under it, shows that pane and moves the bar; on a terminal too narrow for every label the
    active one stays in view."""
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        scr = monitor(app)
        tabs = scr.query_one("#tabs")
        row = lambda y: "".join(s.text for s in tabs.render_line(y))  # noqa: E731
        labels = row(0)
        for i in (2, 5, 0):
            label = labels.split()[2 * i] + " " + labels.split()[2 * i + 1]  # "3 Dirty"
            x = labels.index(label)
            await pilot.click("#tabs", offset=(x + 1, 1 if i == 5 else 0))
            await pilot.pause(0.5)  # the bar slides for 0.3 s
            assert scr.active == i and not scr.panes[i].has_class("-hidden"), (i, label)
            assert [p.id for p in scr.panes if not p.has_class("-hidden")] == [scr.panes[i].id]
            bar = row(1)
            assert bar[x:x + len(label)] == "━" * len(label) and bar[x - 1] == "╸", (bar, label)
        await pilot.resize_terminal(40, 24)
        await pilot.press("6")
        await pilot.pause(0.5)
        assert scr.layout_name == "compact" and "6 Waits" in row(0) and len(row(0)) == 40


def bottom_cells(app) -> list[tuple[str, object]]:
    """The screen's last row as the compositor draws it: each cell's character and style."""
    strip = app.screen._compositor.render_strips()[app.size.height - 1]
    return [(ch, seg.style) for seg in strip for ch in seg.text]


@pytest.mark.parametrize("size", [(80, 24), (200, 50), (40, 20)])
async def test_the_footer_draws_as_textuals(tmp_path, monkeypatch, size):
    """The footer (one widget, widgets/footer.py) against Textual's Footer on the same screen: the
    same keys (display, description, disabled, tooltip), the same cells with the same styles, keys
    past the edge cut where Textual's cuts them, the palette's key pinned right; with the pointer
    over a key (lit, its tooltip given), and with a key disabled (dim)."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from pgio_tui.tui.widgets.footer import FooterBar

    app = live_app(tmp_path)
    check_action = app.check_action
    monkeypatch.setattr(app, "check_action",  # None: shown, disabled (what Textual dims)
                        lambda action, parameters: None if action == "help" else check_action(action, parameters))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        scr = monitor(app)
        ours = scr.query_one(FooterBar)
        await pilot.pause(0.2)
        drawn = [bottom_cells(app)]
        await pilot.hover(FooterBar, offset=(10, 0))  # "space Pause"
        await pilot.pause(0.2)
        assert ours.hover == 1 and ours.tooltip and ours.styles.pointer == "pointer"
        drawn.append(bottom_cells(app))
        await pilot.hover("#status")
        await ours.remove()
        await scr.mount(Footer())
        scr.refresh_bindings()
        await pilot.pause(0.3)
        textuals = [bottom_cells(app)]
        await pilot.hover(Footer, offset=(10, 0))
        await pilot.pause(0.2)
        textuals.append(bottom_cells(app))
        textual_keys = [(k.key, k.key_display, k.description, k._disabled, k.tooltip)
                        for k in scr.query_one(Footer).query(FooterKey)]
    assert textual_keys == [(k.key, k.display, k.description, k.disabled, k.tooltip or None) for k in ours.keys]
    text = "".join(ch for ch, _ in drawn[0])
    assert "Quit" in text and "Help" in text and "^p palette" in text and text.rstrip().endswith("palette")
    assert drawn[0] != drawn[1]  # the hovered key is lit
    assert drawn[0] == textuals[0]
    assert drawn[1] == textuals[1]


async def test_a_click_on_a_footer_key_runs_it(tmp_path):
    """A press on a footer key runs its binding (the help, the palette's key on the right); the
    wheel scrolls the keys that do not fit, and a key scrolled into view is pressed where it is."""
    from textual.command import CommandPalette

    from pgio_tui.tui.widgets.footer import FooterBar

    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        footer = monitor(app).query_one(FooterBar)
        row = lambda: "".join(ch for ch, _ in bottom_cells(app))  # noqa: E731
        await pilot.click(FooterBar, offset=(row().index("Help"), 0))
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is monitor(app))
        await pilot.click(FooterBar, offset=(row().index("palette"), 0))
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is monitor(app))
        assert "Theme" not in row()
        for _ in range(20):
            footer.post_message(events.MouseScrollDown(footer, 1, 0, 0, 1, 0, False, False, False))
            await pilot.pause()
        assert footer.scroll > 0 and "t Theme" in row()
        before = app.theme
        await pilot.click(FooterBar, offset=(row().index("Theme"), 0))
        await pilot.pause(0.3)
        assert app.theme != before


async def test_resize_from_80x24_to_200x60_shows_every_pane(tmp_path):
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        scr = monitor(app)
        assert scr.layout_name == "compact"
        assert scr.query_one("#vitals").display
        await pilot.resize_terminal(200, 60)
        await pilot.pause(0.5)
        assert scr.layout_name == "grid3"
        assert not scr.query_one("#vitals").display and not scr.query_one("#tabs").display
        for pane in scr.panes:
            assert pane.display and not pane.has_class("-hidden")
            assert pane.region.width >= 60 and pane.region.height >= 25, (pane.id, pane.region)
            assert text_of(pane).strip(), pane.id
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.3)
        assert scr.layout_name == "grid2"
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        assert scr.layout_name == "compact"


async def test_panes_say_why_they_are_empty(tmp_path):
    sampler = FakeSampler(os_mode="none", pgss=False, read_all_stats=False)
    for f in sampler._frames:  # what such a server gives: no OS figures, no latency, no waits
        f.devices, f.device_roles, f.waits = {}, {}, []
        for k in list(f.values):
            if k.startswith(("mem.", "io.", "latency.", "statements.")) and k != "latency.tps":
                del f.values[k]
    app = live_app(tmp_path, sampler)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 3)
        await pilot.pause(0.4)
        scr = monitor(app)
        assert "run pgio-tui on the database host" in scr.query_one("#memory").section_text("chart")
        assert "run pgio-tui on the database host" in scr.query_one("#devices").section_text("chart")
        assert "pg_stat_statements not installed" in scr.query_one("#latency").border_subtitle
        assert "pg_monitor" in scr.query_one("#waits").section_text("bars")


async def test_workload_tail_and_stop(tmp_path):
    workload = StubWorkload()
    app = live_app(tmp_path, workload=workload)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.history) >= 2)
        await pilot.pause(0.3)
        strip = monitor(app).query_one("#workload", LinesView)
        assert "pgbench" in text_of(strip) and "3201.0 tps" in text_of(strip)
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        assert workload.stopped.wait(5)
        await pilot.pause(0.4)
        assert "finished" in text_of(strip)


async def test_command_palette_lists_the_actions(tmp_path):
    app = live_app(tmp_path, workload=StubWorkload())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        titles = [c.title for c in app.get_system_commands(app.screen)]
    for wanted in ("Pause / resume display", "Start / stop recording", "Add annotation", "Zoom in", "Zoom out",
                   "Next theme", "Help", "Show pane 4: Devices", "Stop workload", "Quit"):
        assert wanted in titles, wanted
