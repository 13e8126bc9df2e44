"""terminal.py and textual_private/direct.py: the updates a live session sends, cropped to the changed cells
(by Textual's compositor, or straight from a view's rows), leave the terminal showing exactly what a
full repaint shows. Checked on a small terminal emulator fed the bytes."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from rich.color import ColorSystem
from fixture_recording import synthetic_frames

from pgio_tui.tui import textual_private
from pgio_tui.tui.textual_private import terminal
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.textual_private import direct

FRESH = "PGIO_TEST_FRESH_COLOURS"  # set in the interpreter that runs one colour system
TOKEN = re.compile(r"\x1b\[(\d+);(\d+)H|\x1b\[([0-9;]*)m|(\n)|(.)", re.S)


class Screen:
    """Cursor moves, SGR and text: all a Textual update uses. SGR codes add to what is in force, as
    a terminal takes them (0 resets), so a cell holds its look, not the sequence that gave it."""

    def __init__(self, width: int, height: int):
        self.cells = [[(" ", LOOK)] * width for _ in range(height)]
        self.x = self.y = 0
        self.look = LOOK

    def feed(self, data: str) -> None:
        for y, x, sgr, nl, ch in TOKEN.findall(data):
            if y:
                self.y, self.x = int(y) - 1, int(x) - 1
            elif nl:
                self.y, self.x = self.y + 1, 0
            elif ch:
                self.cells[self.y][self.x] = (ch, self.look)
                self.x += 1
            else:
                self.look = sgr_look(self.look, sgr)


LOOK = (None, None, frozenset())  # foreground, background, attributes: the terminal's default


def sgr_look(look: tuple, sgr: str) -> tuple:
    """The look after an SGR's codes: colours as their codes (38;5;n, 38;2;r;g;b, 31...), 0 resets,
    22-29 take attributes off, 39 and 49 the colours; any other code is an attribute."""
    fg, bg, attrs = look
    attrs = set(attrs)
    codes = sgr.split(";") if sgr else ["0"]
    i = 0
    while i < len(codes):
        code = int(codes[i] or 0)
        if code in (38, 48):
            n = 5 if codes[i + 1] == "2" else 3
            colour, i = ";".join(codes[i:i + n]), i + n
            fg, bg = (colour, bg) if code == 38 else (fg, colour)
            continue
        if code == 0:
            fg, bg, attrs = None, None, set()
        elif 30 <= code <= 37 or 90 <= code <= 97:
            fg = str(code)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            bg = str(code)
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        elif 22 <= code <= 29:
            attrs -= {1, 2} if code == 22 else {5, 6} if code == 25 else {code - 20}
        else:
            attrs.add(code)
        i += 1
    return fg, bg, frozenset(attrs)


def full_repaint(app, size) -> Screen:
    """The screen as Textual's own full update draws it."""
    reference = Screen(*size)
    full = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    reference.feed(full.render_segments(app.console))
    return reference


def kind(renderable) -> str:
    """The update's kind; a direct update that also carries the compositor's is "DirectUpdate+"."""
    name = type(renderable).__name__
    return name + "+" if getattr(renderable, "update", None) is not None else name


async def run(size, ticks=40, warm=300, keys=None, each=False, color_system=None, per_tick=None):
    """Ticks on a MonitorApp whose updates feed a terminal emulator: keys[k] are pressed (or, when
    callable, awaited with the app and the pilot) after tick k; per_tick(k, updates of the tick)."""
    frames = list(synthetic_frames(warm + ticks, incidents=True))
    app = MonitorApp(SessionInfo(host="h", server_version="17.2"), frames=frames[:warm], theme="pgio-dark")
    screen = Screen(*size)
    sent = []
    original = app._display

    def display(scr, renderable):
        nonlocal screen, size
        if renderable is not None and hasattr(renderable, "render_segments"):
            if tuple(app.size) != size:  # resized: a new terminal, which Textual paints in full
                size = tuple(app.size)
                screen = Screen(*size)
            data = renderable.render_segments(app.console)
            sent.append((kind(renderable), len(data)))
            screen.feed(data)
        original(scr, renderable)

    app._display = display
    async with app.run_test(size=size, notifications=True, tooltips=True) as pilot:  # as a real run has them
        if color_system is not None:
            app.console._color_system = color_system
        await pilot.pause()
        full = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
        screen.feed(full.render_segments(app.console))
        for k, f in enumerate(frames[warm:]):
            n = len(sent)
            app.history.push(f)
            app.request_redraw(now=True)
            await pilot.pause()
            if per_tick is not None:
                per_tick(k, sent[n:])
            if keys and k in keys:
                if callable(keys[k]):
                    await keys[k](app, pilot)
                else:
                    await pilot.press(*keys[k])
                await pilot.pause()
            if each:  # after every tick, not only at the end (a dialog's full update would hide a wrong cell)
                assert screen.cells == full_repaint(app, size).cells, (size, k)
        reference = full_repaint(app, size)
    return screen, reference, sent


@pytest.mark.asyncio
async def test_with_the_fast_path_off_textual_paints_every_tick_its_own_way():
    """The fallback (Textual's own drawing): run where the fast path is off, by
    tests/test_tui_fast_path_off.py; nothing of it is installed, and every tick shows what a full
    repaint shows."""
    if textual_private.on():
        pytest.skip("runs where the fast path is off (tests/test_tui_fast_path_off.py)")
    from textual._compositor import ChopsUpdate, Compositor

    before = dict(direct.sent)
    screen, reference, sent = await run((80, 24), ticks=20, each=True)
    assert not terminal._installed and direct.sent == before
    assert ChopsUpdate.render_segments is not terminal.render_segments
    assert Compositor.render_partial_update is not terminal.render_partial_update
    kinds = [n for n, _ in sent]
    assert not any(k.startswith("DirectUpdate") for k in kinds) and kinds.count("ChopsUpdate") >= 10
    assert screen.cells == reference.cells


@pytest.mark.asyncio
async def test_cropped_updates_show_what_a_full_repaint_shows():
    assert terminal._installed and terminal._direct_updates  # LinesView installs it
    for size in ((80, 24), (120, 40)):
        before = dict(direct.sent)
        screen, reference, sent = await run(size, each=True)
        assert [n for n, _ in sent].count("DirectUpdate") >= 30  # the ticks went straight to the terminal
        assert direct.sent["direct"] - before["direct"] >= 100  # views sent directly
        for y, (got, want) in enumerate(zip(screen.cells, reference.cells)):
            assert got == want, f"{size} line {y}"


@pytest.mark.parametrize("system", ["EIGHT_BIT", "STANDARD"])
def test_fewer_colours_each_in_an_interpreter_of_its_own(system):
    """rich keeps a style's codes on the Style at its first render, whatever the colour system (Textual's
    Strip reads them there too), and equal styles are one object across apps: a real run has one colour
    system, so the check below runs in a fresh interpreter, as a real run does."""
    test = f"{__file__}::test_direct_updates_in_fewer_colours_show_what_a_full_repaint_shows[{system}]"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                       env={**os.environ, FRESH: system}, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "1 passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


@pytest.mark.parametrize("system", ["EIGHT_BIT", "STANDARD"])
@pytest.mark.asyncio
async def test_direct_updates_in_fewer_colours_show_what_a_full_repaint_shows(system):
    """256 or 16 colours: the direct rows render each style as a Strip does for that console."""
    if os.environ.get(FRESH) != system:
        pytest.skip("runs in an interpreter of its own (test_fewer_colours_each_in_an_interpreter_of_its_own)")
    system = ColorSystem[system]
    before = dict(direct.sent)
    screen, reference, sent = await run((80, 24), ticks=20, each=True, color_system=system)
    assert [n for n, _ in sent].count("DirectUpdate") >= 15
    assert direct.sent["direct"] > before["direct"]
    assert screen.cells == reference.cells


@pytest.mark.asyncio
async def test_a_toast_over_a_pane_its_pane_is_painted_by_textual_the_others_directly():
    """While a notification covers a pane, that pane's cells go through the compositor (the toast
    stays in front) and the other panes' rows straight out, in one update; when it goes, the pane
    is sent directly again. Every cell is checked against a full repaint after every tick."""
    seen: dict[int, list[str]] = {}
    blocked: dict[int, int] = {}

    async def toast(app, pilot):
        app.notify("checkpoint starting " * 3, timeout=60)

    async def no_toast(app, pilot):
        app.clear_notifications()

    def per_tick(k, updates):
        seen[k] = [name for name, _ in updates]
        blocked[k] = direct.sent["textual"]

    keys = {4: toast, 14: no_toast}
    for size in ((80, 24), (120, 40)):
        screen, reference, _sent = await run(size, ticks=24, keys=keys, each=True, per_tick=per_tick)
        assert screen.cells == reference.cells
        covered = [k for k in range(6, 14) if blocked[k] > blocked[k - 1]]
        assert covered, (size, blocked)  # the pane under the toast went Textual's way
        assert all(seen[k] in (["DirectUpdate+"], ["DirectUpdate"]) for k in range(6, 14)), seen
        assert "DirectUpdate+" in {name for k in covered for name in seen[k]}, seen  # both, in one update
        assert all(blocked[k] == blocked[16] for k in range(17, 22)), blocked  # gone: all direct again
        assert all(seen[k] == ["DirectUpdate"] for k in range(17, 22)), seen


@pytest.mark.asyncio
async def test_a_theme_and_a_resize_then_direct_updates_show_what_a_full_repaint_shows():
    """A new theme, a smaller then a larger terminal: the ticks after each are sent directly again
    (the views' kept rows and places are dropped with them) and show what a full repaint shows."""
    async def theme(app, pilot):
        app.theme = "textual-light"

    async def smaller(app, pilot):
        await pilot.resize_terminal(100, 30)

    async def larger(app, pilot):
        await pilot.resize_terminal(120, 40)

    seen: dict[int, list[str]] = {}
    keys = {3: theme, 7: smaller, 11: larger}
    screen, reference, _sent = await run((120, 40), ticks=18, keys=keys, each=True,
                                         per_tick=lambda k, updates: seen.update({k: [n for n, _ in updates]}))
    assert screen.cells == reference.cells
    assert [len(reference.cells[0]), len(reference.cells)] == [120, 40]
    assert all(seen[k] == ["DirectUpdate"] for k in (5, 6, 9, 10, 13, 14, 15)), seen


@pytest.mark.asyncio
async def test_no_colour_is_painted_by_textual(monkeypatch):
    """NO_COLOR adds a filter that changes every style: no row is sent directly, and the terminal
    still shows what a full repaint shows."""
    monkeypatch.setenv("NO_COLOR", "1")
    before = dict(direct.sent)
    screen, reference, sent = await run((80, 24), ticks=12, each=True)
    assert direct.sent["direct"] == before["direct"] and direct.sent["textual"] > before["textual"]
    assert "DirectUpdate" not in [n for n, _ in sent] and "ChopsUpdate" in [n for n, _ in sent]
    assert screen.cells == reference.cells


@pytest.mark.asyncio
async def test_a_textual_of_another_shape_paints_every_pane_its_own_way(monkeypatch):
    """When install() finds Textual not shaped as direct.py expects, no row is sent directly and
    the compositor's updates still show what a full repaint shows."""
    monkeypatch.setattr(terminal, "_direct_updates", False)
    before = dict(direct.sent)
    screen, reference, sent = await run((80, 24), ticks=12, each=True)
    assert direct.sent == before
    assert "DirectUpdate" not in [n for n, _ in sent] and [n for n, _ in sent].count("ChopsUpdate") >= 8
    assert screen.cells == reference.cells


@pytest.mark.asyncio
async def test_focus_panes_and_a_dialog_over_the_panes_show_what_a_full_repaint_shows():
    """Only the widgets whose cells are sent are rendered (terminal.render_partial_update): borders
    that change with focus, another pane shown, a dialog opened and closed over ticking panes. Under
    the dialog the panes are painted Textual's way; before and after it, their rows directly."""
    keys = {3: ["tab"], 6: ["2"], 9: ["question_mark"], 12: ["escape"], 15: ["shift+tab"], 18: ["5"]}
    for size in ((80, 24), (120, 40)):
        seen: dict[int, list[str]] = {}
        screen, reference, _sent = await run(size, ticks=24, keys=keys, each=True,
                                             per_tick=lambda k, updates: seen.update({k: [n for n, _ in updates]}))
        for y, (got, want) in enumerate(zip(screen.cells, reference.cells)):
            assert got == want, f"{size} line {y}"
        assert all(seen[k] == ["DirectUpdate"] for k in (0, 1, 2, 14, 15)), seen  # 13: the repaint after it
        assert not any("Direct" in name for k in (10, 11, 12) for name in seen[k]), seen  # the dialog's on top


@pytest.mark.parametrize("system", [ColorSystem.STANDARD, ColorSystem.EIGHT_BIT, ColorSystem.TRUECOLOR])
def test_cells_rendered_in_fewer_codes_look_as_each_run_rendered_whole(system):
    """terminal.render_cells sets only the colour that differs between runs that set both colours
    alone, and resets before anything else: on the emulator its cells look exactly as the runs
    rendered one by one (each its whole style and a reset), for random rows of styles with and
    without attributes, one colour only, no style at all and a link, cut anywhere."""
    import random

    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    rng = random.Random(7)
    colours = ["red", "#102030", "color(200)", "bright_blue", "default", "#ffffff"]
    styles = [Style(color=rng.choice(colours), bgcolor=rng.choice(colours)) for _ in range(8)]
    styles += [Style(bold=True, color="red", bgcolor="black"), Style(color="green"), Style(bgcolor="blue"),
               Style(underline=True), Style(), None, Style(italic=True, reverse=True, bgcolor="#334455"),
               Style(link="https://example.invalid/", color="red", bgcolor="black")]
    saved = 0
    for _ in range(400):
        row = [Segment("".join(rng.choice("ab ⣿·") for _ in range(rng.randint(1, 6))), rng.choice(styles))
               for _ in range(rng.randint(1, 12))]
        width = sum(len(seg.text) for seg in row)
        start = rng.randrange(width)
        end = rng.randint(start + 1, width)
        whole = "".join(text if style is None else Strip.render_style(style, text, system)
                        for text, style, _ in Strip(row).crop(start, end))
        fewer = terminal.render_cells(row, start, end, system)
        got, want = Screen(width + 2000, 1), Screen(width + 2000, 1)  # a link's sequence takes cells here
        got.feed(fewer)
        want.feed(whole)
        assert got.cells == want.cells and got.look == want.look == LOOK, (row, start, end)
        saved += len(whole) - len(fewer)
    assert saved > 0


def calls_to(monkeypatch, name: str) -> list:
    """Every call of widgets/lines.py's `name(a, b)` from now on, as (a, b, what it returned)."""
    from pgio_tui.tui.widgets import lines
    calls, original = [], getattr(lines, name)

    def recorded(a, b):
        got = original(a, b)
        calls.append((a, b, got))
        return got

    monkeypatch.setattr(lines, name, recorded)
    return calls


def cells(segments) -> list:
    return [(ch, style) for text, style, _ in segments for ch in text]


@pytest.mark.asyncio
async def test_a_rows_changed_span_is_where_its_cells_differ(monkeypatch):
    """lines.changed_span on the rows of a live session: the cells outside the span are the same
    character in the same style, and an empty span means the rows are the same."""
    pairs = calls_to(monkeypatch, "changed_span")
    await run((120, 40), ticks=12)
    assert len(pairs) > 100
    for a, b, (start, end) in pairs:
        ca, cb = cells(a), cells(b)
        assert len(ca) == len(cb) and ca[:start] == cb[:start] and ca[end:] == cb[end:]
        assert (ca == cb) == (start == end)


@pytest.mark.asyncio
async def test_a_rows_changed_spans_cover_every_changed_cell_and_only_split_at_gaps(monkeypatch):
    """lines.changed_spans on the rows of a live session at 80x24 (the vitals line, the pane's text
    and chart): every cell outside the spans is the same character in the same style; spans are in
    order and apart by SPAN_GAP equal cells or more; a span split off begins and ends on a changed
    cell. Then the screen is what a full repaint shows (the other tests here check that per tick)."""
    from pgio_tui.tui.widgets import lines
    pairs = calls_to(monkeypatch, "changed_spans")
    screen, reference, _sent = await run((80, 24), ticks=12)
    assert screen.cells == reference.cells
    split = 0
    assert len(pairs) > 50
    for a, b, spans in pairs:
        ca, cb = cells(a), cells(b)
        assert len(ca) == len(cb)
        inside = {x for start, end in spans for x in range(start, end)}
        assert all(ca[x] == cb[x] for x in range(len(ca)) if x not in inside)
        assert (ca == cb) == (not spans)
        for (_s1, e1), (s2, _e2) in zip(spans, spans[1:]):
            assert s2 - e1 >= lines.SPAN_GAP
        if len(spans) > 1:
            split += 1
            assert all(ca[s] != cb[s] and ca[e - 1] != cb[e - 1] for s, e in spans)
    assert split, "no row changed in places far apart (the vitals line does every tick)"


@pytest.mark.asyncio
async def test_a_tick_without_a_column_shift_sends_little():
    """Between two column shifts a chart's newest cells change, not its rows. And after 30 ticks
    sent directly with no other render between them, a full repaint still shows what was sent
    (the rows sent directly stayed marked in the views' line caches)."""
    screen, reference, sent = await run((80, 24), ticks=30)
    assert screen.cells == reference.cells
    assert [n for n, _ in sent].count("DirectUpdate") >= 25
    sizes = sorted(n for kind, n in sent if kind in ("ChopsUpdate", "DirectUpdate"))
    assert sizes[len(sizes) // 4] < 1500, sizes  # the quieter ticks: far below a full chart


@pytest.mark.asyncio
async def test_a_tick_is_sent_in_one_pass_within_the_tick():
    """MonitorScreen.redraw paints every changed pane itself (lines.one_paint, terminal.paint_now,
    direct.render): the update leaves before the tick returns, with no message to a pane or the
    screen, and the terminal then shows what a full repaint shows; a dialog on top gets Textual's
    own way."""
    size = (120, 40)
    frames = list(synthetic_frames(330, incidents=True))
    app = MonitorApp(SessionInfo(host="h", server_version="17.2"), frames=frames[:300], theme="pgio-dark")
    screen, sent = Screen(*size), []
    original = app._display

    def display(scr, renderable):
        if renderable is not None and hasattr(renderable, "render_segments"):
            data = renderable.render_segments(app.console)
            sent.append(type(renderable).__name__)
            screen.feed(data)
        original(scr, renderable)

    app._display = display
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen.feed(app.screen._compositor.render_update(full=True, screen_stack=[]).render_segments(app.console))
        monitor = app.screen
        for k, f in enumerate(frames[300:]):
            if k == 20:  # a dialog over the panes: they tick beneath it, painted Textual's way
                await pilot.press("question_mark")
                await pilot.pause()
            n = len(sent)
            app.history.push(f)
            app.request_redraw(now=True)
            if k < 20:
                assert sent[n:] == ["DirectUpdate"], k  # sent already, in the tick, straight from the rows
                assert all(w._message_queue.empty() for w in [monitor, *monitor.panes]), k
                assert screen.cells == full_repaint(app, size).cells, k
            await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert screen.cells == full_repaint(app, size).cells


@pytest.mark.asyncio
async def test_an_update_goes_to_the_driver_in_one_write():
    """terminal.one_write: Textual's three writes of an update (start of a synchronized update, the
    update, its end) reach the driver as one, the same bytes in the same order."""
    from textual.app import App

    class Driver:
        def __init__(self):
            self.writes = []

        def write(self, data):
            self.writes.append(data)

    class Fake:
        def __init__(self):
            self._driver = Driver()

    def display(app, screen, renderable):
        app._driver.write("\x1b[?2026h")
        app._driver.write(renderable)
        app._driver.write("\x1b[?2026l")

    app = Fake()
    terminal.one_write(display)(app, None, "cells")
    assert app._driver.writes == ["\x1b[?2026hcells\x1b[?2026l"]
    terminal.one_write(display)(app, None, None)  # nothing to show: Textual's own way
    assert app._driver.writes[1:] == ["\x1b[?2026h", None, "\x1b[?2026l"]
    assert "write" not in vars(app._driver)
    assert App._display.joins_writes  # installed
