"""The monitor's footer: one widget drawn as Textual's Footer looks.

Textual's Footer is a scrollable container holding a widget per key (eleven on the monitor, the
command palette's docked on the right), each styled, composed, mounted, laid out and rendered
before the first frame, and all of them unmounted and mounted again when the keys change: about
130 M of the instructions from exec to the first frame (`bench/first_frame_split.py`). This draws
the same row from one widget: each key as Textual's FooterKey renders it (its text, its styles
folded from the same rules in the same order: the footer's, the key's, its `:hover` and
`-disabled` ones, the key and description parts), the palette's key pinned right over the keys it
covers, with its `vkey` border. It shows the keys Textual's would (the screen's shown bindings, one
per action, the palette's key last) and redraws when the screen's bindings signal says they
changed, as Textual's recomposes. A press on a key runs it (`simulate_key`; a disabled one rings
the bell), the key under the pointer is lit and gives its tooltip and a hand pointer, and the wheel
scrolls the keys sideways when they do not fit (not animated). Not drawn: Textual's compact footer
and its binding groups (pgio-tui uses neither; a group's keys would show as plain keys).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from rich.segment import Segment
from rich.style import Style as RichStyle
from rich.text import Text
from textual import events
from textual.color import Color
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual
from textual.widget import Widget


class Key(NamedTuple):
    """A key as the footer shows it (Textual's FooterKey's arguments)."""

    key: str
    display: str
    description: str
    disabled: bool
    tooltip: str
    palette: bool = False


def shown_keys(screen: Screen) -> list[Key]:
    """What Textual's Footer composes for `screen`: each shown binding's first key per action,
    then the command palette's key when the app has one."""
    app = screen.app
    active = screen.active_bindings
    by_action: defaultdict[str, list] = defaultdict(list)
    for _node, binding, enabled, tooltip in active.values():
        if binding.show:
            by_action[binding.action].append((binding, enabled, tooltip))
    keys = [Key(b.key, app.get_key_display(b), b.description, not enabled, tooltip)
            for (b, enabled, tooltip), *_ in by_action.values()]
    if app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
        _node, b, enabled, _tooltip = active[app.COMMAND_PALETTE_BINDING]
        keys.append(Key(b.key, app.get_key_display(b), b.description, not enabled,
                        b.tooltip or b.description, palette=True))
    return keys


class Folded(NamedTuple):
    """Styles folded so far, from the outermost node in: more layers fold on from here."""
    background: Color = Color(0, 0, 0, 0)
    color: Color = Color(255, 255, 255, 0)
    visual_color: Color = Color(255, 255, 255, 0)
    opacity: float = 1.0
    text: RichStyle = RichStyle()


def fold_on(folded: Folded, layers) -> Folded:
    """`folded` with `layers` (outermost first) folded on: Textual's DOMNode.rich_style and
    Widget.get_visual_style, over a list."""
    background, color, visual_color, opacity, text = folded
    for styles in layers:
        opacity *= styles.opacity
        text_background = background
        if styles.has_rule("background"):
            tinted = styles.background.tint(styles.background_tint)
            text_background = background + tinted
            background += tinted.multiply_alpha(opacity)
        if styles.has_rule("color"):
            color = styles.color
            visual_color = styles.color.multiply_alpha(styles.text_opacity)
        text += styles.text_style
        if styles.has_rule("auto_color") and styles.auto_color:
            color = visual_color = text_background.get_contrast_text(color.a)
    return Folded(background, color, visual_color, opacity, text)


def styles_of(folded: Folded) -> tuple[RichStyle, VisualStyle]:
    """The Rich style and the visual style of the node whose styles (its ancestors' first) were folded."""
    background, color, visual_color, _opacity, text = folded
    rich = text + RichStyle.from_color((background + color).rich_color if (background.a or color.a) else None,
                                       background.rich_color if background.a else None)
    visual = VisualStyle(background, visual_color, bold=text.bold, dim=text.dim, italic=text.italic,
                         underline=text.underline, strike=text.strike)
    return rich, visual


class FooterBar(Widget, can_focus=False):
    """The screen's keys in one row, the command palette's pinned right."""

    DEFAULT_CSS = """
    FooterBar {
        color: $footer-foreground;
        background: $footer-background;
        dock: bottom;
        height: 1;
        width: 1fr;
        text-wrap: nowrap;
        & > .footer-bar--item { background: $footer-item-background; }
        & > .footer-bar--hover { color: $footer-key-foreground; background: $block-hover-background; }
        & > .footer-bar--disabled { text-style: dim; }
        & > .footer-bar--key {
            color: $footer-key-foreground; background: $footer-key-background; text-style: bold;
        }
        & > .footer-bar--description {
            color: $footer-description-foreground; background: $footer-description-background;
        }
        & > .footer-bar--palette-border { color: $foreground 20%; }
    }
    """
    COMPONENT_CLASSES = {"footer-bar--item", "footer-bar--hover", "footer-bar--disabled", "footer-bar--key",
                         "footer-bar--description", "footer-bar--palette-border"}
    ALLOW_SELECT = False

    hover: reactive[int | None] = reactive(None, init=False)
    scroll: reactive[int] = reactive(0, init=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.keys: list[Key] = []
        self.spans: list[tuple[int, int]] = []  # each key's cells [start, end) in the row, palette's included
        self._styles_key: object = None
        self._rendered: dict[tuple[int, bool], Strip] = {}  # (key, hovered) -> its cells
        self._ancestors = Folded()  # the footer's ancestors' styles and its own, folded (for _styles_key)
        self._widths: dict[int, int] = {}  # key -> its cells

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self._update_keys(shown_keys(self.screen))

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """The screen's keys changed (Textual's Footer recomposes then, when the app has focus)."""
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            keys = shown_keys(screen)
            if keys != self.keys:
                self._update_keys(keys)

    def _update_keys(self, keys: list[Key]) -> None:
        self.keys = keys
        self._rendered.clear()
        self._widths.clear()
        if self.hover is not None and self.hover >= len(keys):
            self.hover = None
        self.refresh()

    def notify_style_update(self) -> None:
        """Restyled (a theme, the style sheet, a pseudo-class): the keys' cells are drawn again."""
        super().notify_style_update()
        self._rendered.clear()

    def watch_hover(self, hover: int | None) -> None:
        self.tooltip = self.keys[hover].tooltip or None if hover is not None else None
        self.styles.pointer = "default" if hover is None else "pointer"  # FooterKey:hover's
        self.refresh()

    def watch_scroll(self) -> None:
        self.refresh()

    # --- drawing --------------------------------------------------------------------------------

    def _key_text(self, key: Key, key_style: RichStyle | str = "", description_style: RichStyle | str = "") -> Text:
        """Key `key`'s text as Textual's FooterKey writes it; its cells are the strip's, less the
        palette's border and padding."""
        compact = key.palette  # Textual binds the keys to its footer's compact flag (off), not the palette's
        if key.description:
            return Text.assemble(
                (key.display if compact else f" {key.display} ", key_style),
                (f" {key.description}" if compact else f"{key.description} ", description_style))
        return Text.assemble((key.display, key_style))

    def _key_width(self, i: int) -> int:
        """Key `i`'s cells, as its strip has them (kept till the keys change)."""
        if i not in self._widths:
            key = self.keys[i]
            self._widths[i] = self._key_text(key).cell_len + (2 if key.palette else 0)
        return self._widths[i]

    def _key_strip(self, i: int, hovered: bool) -> Strip:
        """Key `i` as Textual's FooterKey draws it: its text styled by the same rules, in order."""
        styles_key = self.rich_style  # what the footer's ancestors give it (restyling clears the rest)
        if styles_key != self._styles_key:
            self._styles_key = styles_key
            self._rendered.clear()
            self._ancestors = fold_on(Folded(), [node.styles for node in reversed(self.ancestors_with_self)])
        if (i, hovered) in self._rendered:
            return self._rendered[(i, hovered)]
        key = self.keys[i]
        item = self.get_component_styles("footer-bar--item", *(["footer-bar--hover"] if hovered else []),
                                         *(["footer-bar--disabled"] if key.disabled else []))
        in_item = fold_on(self._ancestors, [item])
        item_rich, item_visual = styles_of(in_item)
        key_rich, _ = styles_of(fold_on(in_item, [self.get_component_styles("footer-bar--key")]))
        description_rich, _ = styles_of(fold_on(in_item, [self.get_component_styles("footer-bar--description")]))
        text = self._key_text(key, key_rich, description_rich)
        text.stylize_before(item_rich)
        width = text.cell_len
        strip = Visual.to_strips(self, Content.from_rich_text(text, console=self.app.console), width, 1,
                                 item_visual)[0]
        if key.palette:  # Textual's: a vkey left border in $foreground 20%, a cell of padding right
            border = self.get_component_styles("footer-bar--palette-border").color
            background = item_visual.background or Color(0, 0, 0, 0)
            edge = Strip([Segment("▏", RichStyle.from_color((background + border).rich_color,
                                                             background.rich_color))])
            pad = Strip.blank(1, RichStyle.from_color(bgcolor=background.rich_color))
            strip = Strip.join([edge, strip, pad])
        self._rendered[(i, hovered)] = strip
        return strip

    def _layout(self) -> int:
        """Each key's span (the palette's key from the right edge, the others from the left,
        unscrolled), and the room the scrolled keys have: the width less the palette's key. From the
        keys' widths: only the keys in view are drawn (render_line)."""
        width = self.size.width
        self.spans, x = [], 0
        for i, key in enumerate(self.keys):
            w = self._key_width(i)
            if key.palette:
                self.spans.append((width - w, width))
            else:
                self.spans.append((x, x + w))
                x += w
        return self._room()

    def _scrolled(self, room: int, scroll: int | None = None) -> int:
        """How far the keys are scrolled (`scroll`, by default the widget's) within what is past `room`."""
        total = max((end for key, (_start, end) in zip(self.keys, self.spans) if not key.palette), default=0)
        return max(0, min(self.scroll if scroll is None else scroll, total - room))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = RichStyle.from_color(bgcolor=self.rich_style.bgcolor)
        if y != 0 or not self.keys:
            return Strip.blank(width, base)
        room = self._layout()
        scroll = self._scrolled(room)
        # the keys scrolled out of view are blanks of their width, cropped away below
        keys = Strip.join([
            self._key_strip(i, self.hover == i) if start < scroll + room and end > scroll else Strip.blank(end - start)
            for i, (key, (start, end)) in enumerate(zip(self.keys, self.spans)) if not key.palette])
        palette = [self._key_strip(i, self.hover == i) for i, key in enumerate(self.keys) if key.palette]
        return Strip.join([keys.crop_extend(scroll, scroll + max(0, room), base), *palette]).crop_extend(0, width, base)

    # --- the pointer ------------------------------------------------------------------------------

    def _room(self) -> int:
        return self.size.width - sum(end - start for key, (start, end) in zip(self.keys, self.spans) if key.palette)

    def _key_at(self, x: int) -> int | None:
        """The key at cell `x`: the palette's over the keys it covers, the others scrolled."""
        room = self._room()
        on_palette = x >= room
        x = x if on_palette else x + self._scrolled(room)
        for i, (key, (start, end)) in enumerate(zip(self.keys, self.spans)):
            if key.palette == on_palette and start <= x < end:
                return i
        return None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        index = self._key_at(event.x)
        if index is None:
            return
        if self.keys[index].disabled:
            self.app.bell()
        else:
            self.app.simulate_key(self.keys[index].key)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover = self._key_at(event.x)

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None

    def _scroll_by(self, cells: int, event: events.MouseEvent) -> None:
        """Textual's footer scrolls sideways by the app's horizontal scroll sensitivity (animated)."""
        room = self._room()
        before = self._scrolled(room)
        after = self._scrolled(room, before + cells)
        if after != before:
            self.scroll = after
            event.stop()
            event.prevent_default()

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._scroll_by(int(self.app.scroll_sensitivity_x), event)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._scroll_by(-int(self.app.scroll_sensitivity_x), event)

