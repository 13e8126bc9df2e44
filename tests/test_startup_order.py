"""What start-up puts after the first frame (issue 13: start to first frame): work that would hold
the GIL while the first frame is built waits for it, and still comes."""

from __future__ import annotations

import pytest
from tui_support import wait_for

import pgio_tui.tui.replay as replay
from pgio_tui.store.reader import Recording
from pgio_tui.tui.replay import ReplayApp


@pytest.mark.asyncio
async def test_replay_finds_its_moments_after_the_first_frame(fixture_file, monkeypatch):
    """The moments read the whole file (on a thread, but under the GIL): they are looked for once the
    first frame is drawn, and then arrive."""
    order = []
    find_moments = replay.find_moments

    def recorded_find_moments(rec):
        order.append("moments")
        return find_moments(rec)

    monkeypatch.setattr(replay, "find_moments", recorded_find_moments)
    with Recording(fixture_file) as rec:
        app = ReplayApp(rec, playing=False)
        drawn = app._first_frame_drawn

        def first_frame_drawn():
            order.append("first frame")
            drawn()

        app._first_frame_drawn = first_frame_drawn
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.player.moments)
            assert order == ["first frame", "moments"]
            from pgio_tui.analysis.findings_out import with_findings
            assert app.player.moments == with_findings(find_moments(rec), rec)  # a finished file's findings too


def styles_of(screen) -> dict:
    """Every widget's computed style on the screen: its CSS lines and its rich style."""
    return {(type(n).__name__, n.id, i): (n.styles.css, str(n.rich_style))
            for i, n in enumerate(screen.walk_children(with_self=True))}


@pytest.mark.asyncio
async def test_the_monitor_is_styled_once_and_as_a_full_restyle_would(fixture_file):
    """Shown the first time, the monitor screen is not styled again (its mount just did); what it
    shows is what a full restyle gives. Back from a view after a theme change, it is restyled."""
    from pgio_tui.tui.app import recording_app
    from pgio_tui.tui.screens.monitor import MonitorScreen

    with Recording(fixture_file) as rec:
        app = recording_app(rec)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, MonitorScreen) and app.screen.panes)
            await pilot.pause()
            screen = app.screen
            shown = styles_of(screen)
            app.stylesheet.update(screen)  # the restyle Textual would have done
            assert styles_of(screen) == shown

            await pilot.press("H")  # a view on top; the theme changes under it; back
            await wait_for(pilot, lambda: app.screen is not screen)
            dark = styles_of(screen)
            app.theme = "textual-light"
            await pilot.pause()
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            await pilot.pause()
            light = styles_of(screen)
            assert light != dark
            app.stylesheet.update(screen)
            assert styles_of(screen) == light


@pytest.mark.asyncio
@pytest.mark.parametrize("theme", [None, "textual-light"])
async def test_the_style_sheet_is_parsed_once_with_the_themes_variables(fixture_file, monkeypatch, theme):
    """The first parse already has the theme's variables, so the refresh that setting the theme
    queued is skipped: no second parse of the whole sheet. What the screen shows is what Textual's
    own refresh (the whole sheet parsed again, every node restyled) gives; later theme changes
    still refresh."""
    from textual.app import App
    from textual.css.stylesheet import Stylesheet

    from pgio_tui.tui.app import recording_app
    from pgio_tui.tui.screens.monitor import MonitorScreen

    reparses = []
    reparse = Stylesheet.reparse
    monkeypatch.setattr(Stylesheet, "reparse", lambda self: (reparses.append(1), reparse(self))[1])
    with Recording(fixture_file) as rec:
        app = recording_app(rec, theme=theme)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, MonitorScreen) and app.screen.panes)
            await pilot.pause()
            assert app.theme == (theme or "pgio-dark")
            assert reparses == []
            screen = app.screen
            shown = styles_of(screen)
            App.refresh_css(app, animate=False)  # Textual's own: parse all again, restyle every node
            await pilot.pause()
            assert reparses == [1]
            assert styles_of(screen) == shown
            app.theme = "textual-light" if theme is None else "pgio-dark"
            await pilot.pause()
            assert len(reparses) == 2 and styles_of(screen) != shown


@pytest.mark.asyncio
async def test_the_theme_variables_are_textuals_own_for_every_theme(fixture_file):
    """get_css_variables generates a theme's colour system once (themes.ThemedApp), where Textual's
    own makes it again for the chart defaults: the same variables for every theme, and a theme
    registered again under the same name (another object) is generated anew, not served from the
    last one's."""
    from textual.app import App
    from textual.theme import Theme

    from pgio_tui.tui.app import recording_app
    from pgio_tui.tui.screens.monitor import MonitorScreen

    with Recording(fixture_file) as rec:
        app = recording_app(rec, theme=None)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, MonitorScreen) and app.screen.panes)
            names = sorted(app.available_themes)  # bundled, Textual's (the ANSI ones too)
            assert {"pgio-dark", "pgio-light", "nord"} <= set(names) and any("ansi" in n for n in names)
            for name in names:
                app.theme = name
                await pilot.pause()
                fast = app.get_css_variables()
                app._generated = None  # the cache defeated: Textual's path, every colour made again
                assert App.get_css_variables(app) == fast, name
            dark = app.get_theme("pgio-dark")
            app.theme = "pgio-dark"
            before = app.get_css_variables()
            app.register_theme(Theme(name="pgio-dark", primary="#FF0000", dark=True, variables=dark.variables))
            app.theme = "textual-light"
            app.theme = "pgio-dark"
            await pilot.pause()
            after = app.get_css_variables()
            assert after["primary"] != before["primary"] and after["primary"].upper().startswith("#F")
            assert app.stylesheet._variables == after  # what the sheet was last parsed with
            app._generated = None
            assert App.get_css_variables(app) == after
