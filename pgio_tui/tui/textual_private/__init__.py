"""pgio-tui's reach into Textual's private internals, all of it, behind one guard.

- terminal.py: partial updates cropped to the changed cells, only the widgets sent rendered, a
  tick's changed widgets painted at once in one write, the start-up frame sent when Textual's
  start-up batch is over (not a frame later);
- direct.py: a view's changed rows straight to terminal bytes, without the compositor;
- framed.py: a content row framed from kept border segments, one Strip a row;
- driver.py: an input thread that sleeps until there is input; a callback once a frame is written.

Each buys CPU, not looks: with the fast path off Textual draws its own way, the same cells. It is
on when Textual is a version it is tested on (TESTED, the range pyproject.toml pins), when every
private shape those modules lean on is as they expect (each module's `misfit()`), and when the
environment does not set PGIO_TUI_FAST_PATH=off (how the test suite runs the TUI without it,
tests/test_tui_fast_path_off.py). `off()` says why it is off (the header says so); nothing of it is
installed then. The rest of the TUI imports this package, never Textual's `_` modules.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

TESTED = ((8, 2, 7), (8, 3))  # Textual versions the fast path is tested on: from, and below
ENV = "PGIO_TUI_FAST_PATH"  # "off": Textual's own way (the fallback, as tested)

_off: list[str | None] = []  # worked out once: [why it is off, or None]


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def textual_version() -> str:
    """The installed Textual's version, from its dist-info folder's name beside the package:
    `textual.__version__` asks importlib.metadata, whose imports cost start-up ~30 ms."""
    import textual

    site = os.path.dirname(os.path.dirname(textual.__file__ or ""))
    try:
        found = [e.name[len("textual-"):-len(".dist-info")] for e in os.scandir(site)
                 if e.name.startswith("textual-") and e.name.endswith(".dist-info")]
    except OSError:
        found = []
    return found[0] if len(found) == 1 else str(textual.__version__)


def _why_off() -> str | None:
    if os.environ.get(ENV, "").strip().lower() == "off":
        return f"{ENV}=off"
    version = textual_version()
    low, high = TESTED
    if not low <= version_tuple(version) < high:
        return f"Textual {version} untested"  # TESTED says which are
    try:
        from pgio_tui.tui.textual_private import driver, framed, terminal
    except ImportError as exc:
        return f"Textual without {exc.name or exc}"
    for module in (terminal, framed, driver):
        misfit = module.misfit()
        if misfit:
            return f"Textual's {misfit} changed"
    return None


def off() -> str | None:
    """Why the fast path is off ("" never): None when it is on."""
    if not _off:
        _off.append(_why_off())
    return _off[0]


def on() -> bool:
    return off() is None


def header_note() -> str | None:
    """What the header says while the fast path is off because of Textual (None: on, or turned off
    on purpose with PGIO_TUI_FAST_PATH=off, as the tests of the fallback do)."""
    why = off()
    if why is None or why.startswith(ENV):
        return None
    return f"⚠ slow drawing ({why})"


def install() -> None:
    """Install the fast path where it is on (idempotent)."""
    if on():
        from pgio_tui.tui.textual_private import terminal
        terminal.install()


def styles_cache(content: Callable, styles: Callable):
    """A LinesView's line cache that frames rows from kept segments (framed.py), None: Textual's."""
    if not on():
        return None
    from pgio_tui.tui.textual_private.framed import FramedLines
    return FramedLines(content, styles)


def paint_now(screen, widgets: set) -> None:
    """Send these widgets' changed cells now (terminal.paint_now with direct.render)."""
    from pgio_tui.tui.textual_private import direct, terminal
    terminal.paint_now(screen, widgets, direct.render)


def paint_pending(screen) -> None:
    """The whole screen painted now, not at its update timer a frame later (terminal.paint_pending)."""
    if on():
        from pgio_tui.tui.textual_private import terminal
        terminal.paint_pending(screen)


def after_written(app, callback: Callable[[], object]) -> None:
    """Run `callback` once what the app has drawn so far is on the terminal (on Textual's writer
    thread: driver.QuietDriver), or at once with another driver (the fast path off, headless)."""
    driver = getattr(app, "_driver", None)
    later = getattr(driver, "after_written", None)
    if later is None:
        callback()
    else:
        later(callback)


class QuietInput:
    """App mixin: run on driver.QuietDriver where Textual would use its Linux driver."""

    def get_driver_class(self):
        from textual import constants

        if on() and constants.DRIVER is None and sys.platform != "win32":
            from pgio_tui.tui.textual_private.driver import QuietDriver
            return QuietDriver
        return super().get_driver_class()
