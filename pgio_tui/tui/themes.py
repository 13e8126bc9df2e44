"""Themes: Textual's built-ins, the bundled TOML themes, and the user's themes folder.

A theme file holds Textual `Theme` fields (name, primary, secondary, accent, warning, error, success,
foreground, background, surface, panel, boost, dark, luminosity_spread, text_alpha) and a
`[variables]` table where the chart colours live (`chart-1` ... `chart-6`, `ckpt-span`, `mark`, the
diff screen's `diff-a` / `diff-b`, and any Textual variable). The name inside the file names the theme, not the file name. A file that
fails to load is skipped and reported; it never stops the app.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.color import Color
from textual.theme import Theme

if TYPE_CHECKING:  # a mixin: what it uses of the App it is mixed into, for the type checker
    from textual.app import App
    _AppBase = App[Any]
else:
    _AppBase = object

from pgio_tui.safe_text import printable

DEFAULT_THEME = "pgio-dark"
_COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
                 "surface", "panel", "boost")
_OTHER_FIELDS = {"name": str, "dark": bool, "luminosity_spread": float, "text_alpha": float}
_META_FIELDS = ("author", "description", "homepage")


def user_themes_dir() -> Path:
    """$XDG_CONFIG_HOME/pgio-tui/themes (~/.config/pgio-tui/themes by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "pgio-tui" / "themes"


def theme_from_toml(text: str, origin: str = "<string>") -> Theme:
    """Parse one theme file; ValueError with a one-line reason when it is not a valid theme."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{origin}: not TOML ({exc})") from None
    variables = data.pop("variables", {}) or {}
    if not isinstance(variables, dict):
        raise ValueError(f"{origin}: [variables] must be a table")
    for meta in _META_FIELDS:
        data.pop(meta, None)
    unknown = set(data) - set(_COLOR_FIELDS) - set(_OTHER_FIELDS)
    if unknown:
        raise ValueError(f"{origin}: unknown key(s) {', '.join(sorted(unknown))}")
    if not data.get("name") or not data.get("primary"):
        raise ValueError(f"{origin}: 'name' and 'primary' are required")
    for key in _COLOR_FIELDS:
        if key in data:
            _check_color(origin, key, data[key])
    for key, value in variables.items():
        if str(key).startswith("chart-") or key in ("ckpt-span", "mark", "diff-a", "diff-b"):
            _check_color(origin, f"variables.{key}", value)
    kwargs = {k: (_OTHER_FIELDS[k](v) if k in _OTHER_FIELDS else v) for k, v in data.items()}
    return Theme(**kwargs, variables={str(k): str(v) for k, v in variables.items()})


def _check_color(origin: str, key: str, value) -> None:
    try:
        Color.parse(str(value))
    except Exception:
        raise ValueError(f"{origin}: {key} = {value!r} is not a colour") from None


def _bundled_folder():
    """pgio_tui/themes: a folder beside this package's modules when installed as files (as pip
    does); importlib.resources, and the zipfile it imports, only for a package that is not."""
    folder = Path(__file__).resolve().parent.parent / "themes"
    if folder.is_dir():
        return folder
    from importlib import resources
    return resources.files("pgio_tui").joinpath("themes")


def bundled_themes() -> list[Theme]:
    """The themes shipped as package data (pgio_tui/themes/*.toml)."""
    out = []
    for entry in sorted(_bundled_folder().iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            out.append(theme_from_toml(entry.read_text(encoding="utf-8"), f"bundled {entry.name}"))
    return out


def user_themes(folder: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Themes from the user's folder, and one error line per file that could not be loaded."""
    folder = folder or user_themes_dir()
    themes: list[Theme] = []
    errors: list[str] = []
    if not folder.is_dir():
        return themes, errors
    for path in sorted(folder.glob("*.toml")):
        try:
            themes.append(theme_from_toml(path.read_text(encoding="utf-8"), str(path)))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            errors.append(str(exc))
    return themes, errors


class ThemedApp(_AppBase):
    """What every pgio-tui app does with themes: bundled and user themes registered, the chart
    colour variables derived from the current theme, --theme applied (or a warning), `t` cycles.

    A mixin for `textual.app.App` subclasses: call `init_themes(theme)` in `__init__` and
    `apply_wanted_theme()` in `on_mount`.
    """

    _parsed_with: dict[str, str] | None = None  # the variables the style sheet was parsed with, once
    _themes_ready = False  # init_themes has picked the theme
    _generated: tuple[Theme, dict[str, str]] | None = None  # a theme and its generated colour system

    def init_themes(self, wanted: str | None) -> None:
        self._wanted_theme = wanted
        for t in bundled_themes():
            self.register_theme(t)
        themes, self._theme_errors = user_themes()
        for t in themes:
            self.register_theme(t)
        if wanted and wanted in self.available_themes:
            self.theme = wanted
        elif not os.environ.get("TEXTUAL_THEME"):
            self.theme = DEFAULT_THEME
        # The style sheet is first parsed when the first screen is styled, with the variables it
        # has then (none: App.__init__ asked before the theme was picked, get_css_variables), while
        # the refresh that setting `theme` queued comes after and parses the whole sheet again.
        # Give it this theme's variables now, and that refresh has nothing left to do (refresh_css).
        self._themes_ready = True
        self._parsed_with = self.get_css_variables()
        self.stylesheet.set_variables(self._parsed_with)

    def get_css_variables(self) -> dict[str, str]:
        """Textual's (the theme's colour system, its variables over the chart colours' defaults),
        with the colour system generated once per theme, not once for Textual and again for
        the chart defaults; and nothing before init_themes has picked the theme (App.__init__ asks
        for its default theme's, which would be made and thrown away)."""
        if not self._themes_ready:
            return {}
        theme = self.current_theme
        variables = {**self._colour_system(theme), **theme.variables}
        self.theme_variables = {**self.get_theme_variable_defaults(), **variables}
        return self.theme_variables

    def _colour_system(self, theme: Theme) -> dict[str, str]:
        """The theme's generated colour system, made once per theme object."""
        if self._generated is None or self._generated[0] is not theme:
            self._generated = (theme, theme.to_color_system().generate())
        return self._generated[1]

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's, but not the first one when the style sheet already has the theme's variables
        (init_themes): parsing it again would give the same rules, and the nodes their styles."""
        parsed_with, self._parsed_with = self._parsed_with, None
        if parsed_with is not None and parsed_with == self.get_css_variables():
            return
        super().refresh_css(animate)

    def notify(self, message: str, **kw) -> None:
        """Notifications are plain text: they carry paths, server errors and recorded names."""
        kw["markup"] = False
        super().notify(printable(message, newlines=True), **kw)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        from pgio_tui.tui.palette import chart_defaults
        theme = self.current_theme
        return chart_defaults({**self._colour_system(theme), **theme.variables})

    def apply_wanted_theme(self) -> None:
        self._parsed_with = None  # the refresh init_themes queued has run: any later one is Textual's
        if self._wanted_theme:
            if self._wanted_theme in self.available_themes:
                self.theme = self._wanted_theme  # set already by init_themes: no change
            else:
                self.notify(f"unknown theme {self._wanted_theme!r}; see the palette (ctrl+p, Theme)",
                            severity="warning")
        if self._theme_errors:
            self.notify("themes not loaded:\n" + "\n".join(self._theme_errors), severity="warning", timeout=10)

    def theme_cycle(self) -> list[str]:
        """Bundled and user themes first, then Textual's (the ANSI ones follow the terminal's palette
        and are left to the palette's Theme command)."""
        ours = [t.name for t in bundled_themes()]
        rest = sorted(n for n in self.available_themes if n not in ours and not n.startswith("textual-ansi"))
        return ours + rest

    def action_next_theme(self) -> None:
        names = self.theme_cycle()
        i = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(i + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)
