"""Footer: Textual's footer, built with the screen and rebuilt only when the keys it shows change.

Textual's footer composes empty, then rebuilds itself (every key widget unmounted, mounted and
styled again) on each bindings refresh: a screen resuming, focus moving, the app asking. Before the
monitor's first frame that is three rebuilds of the same keys. This one shows the keys from its
first compose and rebuilds once per change of what it shows; a refresh while a rebuild is pending
is folded into it (the rebuild reads the keys when it runs).

Each new key also came with its `compact` flag at the default (on), then bound to the footer's
(off): two class changes, each restyling the key at once. Here a bound key starts with the footer's
flag (the command palette's key is not bound: it keeps its own).

With `defer_hidden`, the first compose leaves out the keys that start past the terminal's right
edge (they show only when the footer is scrolled): each key is a widget composed, styled and laid
out before the first frame. `show_rest()` mounts them in their place once that frame is drawn.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

SHOW_REST_AFTER_S = 10.0  # the keys held back are mounted by then even if no first frame came


def shown_keys(screen: Screen) -> tuple:
    """Everything the footer's compose reads from the screen: each active key, its binding (key,
    action, description, display, group, show), whether it is enabled, its tooltip."""
    return tuple((key, b.binding, b.enabled, b.tooltip) for key, b in screen.active_bindings.items())


def on_screen(keys: list[Widget], width: int) -> int:
    """How many of the footer's keys, from the first, may show at `width` before it is scrolled:
    the rest are plain keys that start at or past the right edge even at their narrowest (key, a
    blank, description: padding and margins only add to that). Groups and labels: all of them."""
    plain = [w for w in keys if type(w) is FooterKey and not w.has_class("-grouped")]
    if len(plain) < len(keys):
        return len(keys)
    x = 0
    for i, key in enumerate(plain):
        if x >= width:
            return i
        x += cell_len(key.key_display) + (cell_len(key.description) + 1 if key.description else 0)
    return len(keys)


class Footer(TextualFooter):
    _shown: tuple | None = None  # the keys of the last compose
    _pending = False  # a rebuild is scheduled

    def __init__(self, *args, defer_hidden: bool = False, **kw):
        super().__init__(*args, **kw)
        # Textual's footer composes empty and fills itself after the screen's first bindings refresh
        # (a second mount and paint); the screen's keys are known when it composes, so show them then.
        # Should they differ by that refresh, bindings_changed rebuilds it.
        self.set_reactive(TextualFooter._bindings_ready, True)
        self._defer = defer_hidden
        self._later: list[Widget] = []  # keys held back from the first compose (show_rest)

    def compose(self):
        self._pending = False
        self._later = []
        self._shown = shown_keys(self.screen) if self._bindings_ready else None
        widgets = []
        for widget in super().compose():
            for key in (widget, *widget._pending_children):  # a key, or a group of keys
                if isinstance(key, FooterKey) and "compact" in (key._reactive_connect or {}):  # bound to ours
                    key.set_reactive(FooterKey.compact, self.compact)
                    key.set_class(self.compact, "-compact", update=False)
            widgets.append(widget)
        if self._defer:
            self._defer = False
            palette = widgets[-1:] if widgets and widgets[-1].has_class("-command-palette") else []
            keys = widgets[:len(widgets) - len(palette)]
            n = on_screen(keys, self.app.size.width)
            self._later, widgets = keys[n:], keys[:n] + palette
        yield from widgets

    def on_mount(self) -> None:
        super().on_mount()
        if self._later:
            self.set_timer(SHOW_REST_AFTER_S, self.show_rest)

    def show_rest(self) -> None:
        """Mount the keys the first compose held back, where they belong: before the palette's key."""
        later, self._later = self._later, []
        if not later or not self.is_attached:
            return
        palette = [w for w in self.children if w.has_class("-command-palette")]
        self.mount(*later, before=palette[0] if palette else None)

    def bindings_changed(self, screen: Screen) -> None:
        if self._bindings_ready and screen is self.screen and (self._pending or shown_keys(screen) == self._shown):
            return
        super().bindings_changed(screen)
        self._pending = bool(screen.app.app_focus and self.is_attached and screen is self.screen)
