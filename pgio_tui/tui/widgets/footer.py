"""Footer: Textual's footer, built with the screen and rebuilt only when the keys it shows change.

Textual's footer composes empty, then rebuilds itself (every key widget unmounted, mounted and
styled again) on each bindings refresh: a screen resuming, focus moving, the app asking. Before the
monitor's first frame that is three rebuilds of the same keys. This one shows the keys from its
first compose and rebuilds once per change of what it shows; a refresh while a rebuild is pending
is folded into it (the rebuild reads the keys when it runs).

Each new key also came with its `compact` flag at the default (on), then bound to the footer's
(off): two class changes, each restyling the key at once. Here a bound key starts with the footer's
flag (the command palette's key is not bound: it keeps its own).
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey


def shown_keys(screen: Screen) -> tuple:
    """Everything the footer's compose reads from the screen: each active key, its binding (key,
    action, description, display, group, show), whether it is enabled, its tooltip."""
    return tuple((key, b.binding, b.enabled, b.tooltip) for key, b in screen.active_bindings.items())


class Footer(TextualFooter):
    _shown: tuple | None = None  # the keys of the last compose
    _pending = False  # a rebuild is scheduled

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        # Textual's footer composes empty and fills itself after the screen's first bindings refresh
        # (a second mount and paint); the screen's keys are known when it composes, so show them then.
        # Should they differ by that refresh, bindings_changed rebuilds it.
        self.set_reactive(TextualFooter._bindings_ready, True)

    def compose(self):
        self._pending = False
        self._shown = shown_keys(self.screen) if self._bindings_ready else None
        for widget in super().compose():
            for key in (widget, *widget._pending_children):  # a key, or a group of keys
                if isinstance(key, FooterKey) and "compact" in (key._reactive_connect or {}):  # bound to ours
                    key.set_reactive(FooterKey.compact, self.compact)
                    key.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        if self._bindings_ready and screen is self.screen and (self._pending or shown_keys(screen) == self._shown):
            return
        super().bindings_changed(screen)
        self._pending = bool(screen.app.app_focus and self.is_attached and screen is self.screen)
