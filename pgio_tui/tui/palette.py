"""Style names used by the drawing code -> Rich styles, taken from the app's theme variables.

Charts and tables are drawn as (text, style-name) runs (see plot.py); this is the one place where a
style name becomes a colour, so every theme (built-in, bundled or the user's) colours the charts.
"""

from __future__ import annotations

from rich.style import Style
from textual.color import Color

# App-specific theme variables: a theme's [variables] may set any of them; otherwise they derive
# from the theme's own colours (see chart_defaults).
CHART_VARIABLES = ("chart-1", "chart-2", "chart-3", "chart-4", "chart-5", "chart-6", "ckpt-span", "mark",
                   "diff-a", "diff-b")  # diff-a / diff-b: run A and run B on the diff screen

# style name used in lines -> theme variable
STYLE_VARIABLES = {
    **{v: v for v in CHART_VARIABLES},
    "axis": "foreground-muted", "muted": "foreground-muted", "warn": "warning", "crit": "error",
    "ok": "success", "accent": "accent", "primary": "primary", "text": "foreground",
}
BOLD = {"primary", "crit"}


def chart_defaults(variables: dict[str, str]) -> dict[str, str]:
    """Concrete defaults for the chart variables from a theme's generated colour system."""
    g = variables.get
    return {
        "chart-1": g("primary", "#0178D4"), "chart-2": g("accent", "#FFA62B"), "chart-3": g("success", "#4EBF71"),
        "chart-4": g("secondary", "#004578"), "chart-5": g("error", "#BA3C5B"), "chart-6": g("foreground", "#E0E0E0"),
        "ckpt-span": g("warning", "#FFA62B"), "mark": g("accent", "#FFA62B"),
        "diff-a": g("chart-1", g("primary", "#0178D4")), "diff-b": g("chart-2", g("accent", "#FFA62B")),
    }


def build(variables: dict[str, str]) -> dict[str, Style]:
    """Rich styles by style name; colours with alpha are blended onto the background."""
    background = _parse(variables.get("background")) or Color(0, 0, 0)
    out: dict[str, Style] = {}
    for name, var in STYLE_VARIABLES.items():
        c = _parse(variables.get(var))
        if c is None:
            out[name] = Style(bold=name in BOLD)
            continue
        if c.a < 1:
            c = background + c
        out[name] = Style(color=c.rich_color, bold=name in BOLD)
    a, b = _parse(variables.get("diff-a")), _parse(variables.get("diff-b"))
    if a is not None and b is not None:  # a cell where both runs are marked: A's colour over B's
        out["diff-both"] = Style(color=a.rich_color, bgcolor=b.rich_color)
    out["selected"] = Style(reverse=True)
    out["bold"] = Style(bold=True)
    return out


def _parse(text: str | None) -> Color | None:
    if not text:
        return None
    try:
        return Color.parse(text)
    except Exception:
        return None


def palette_of(app) -> dict[str, Style]:
    """The palette for the app's current theme, built once per theme change."""
    variables = getattr(app, "theme_variables", None) or {}
    key = (getattr(app, "theme", None), id(variables))
    cached = getattr(app, "_pgio_palette", None)
    if cached is None or cached[0] != key:
        cached = (key, build(variables))
        app._pgio_palette = cached
    return cached[1]
