"""The compact layout's pane tabs: one widget drawn as Textual's Tabs look.

Textual's Tabs are eleven widgets (a Tab per label, three containers, the underline), each styled,
mounted, laid out and rendered before the first frame: about a ninth of the instructions from exec
to live's first frame (`bench/first_frame_split.py`). This draws the same two rows (a label per
pane, padded by a cell each side; the bar under the active one, sliding when it moves) from one
widget with the same colours (Textual's Tab and Underline rules, by component class). The number
keys and tab drive it; a click on a label (or under it) asks for its pane.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.strip import Strip
from textual.widget import Widget


class PaneTabs(Widget, can_focus=False):
    """A label per pane, `active` the one shown; never focused (the number keys and tab drive it)."""

    DEFAULT_CSS = """
    PaneTabs {
        width: 100%;
        height: 2;
        pointer: pointer;
        & > .pane-tabs--tab { color: $foreground 50%; }
        & > .pane-tabs--hover, & > .pane-tabs--active { color: $foreground; }
        & > .pane-tabs--bar { color: $block-cursor-background; background: $foreground 10%; }
        &:ansi {
            & > .pane-tabs--tab { text-style: dim; }
            & > .pane-tabs--active { text-style: not dim bold; }
            & > .pane-tabs--bar { background: $border-blurred; }
        }
    }
    """
    COMPONENT_CLASSES = {"pane-tabs--tab", "pane-tabs--hover", "pane-tabs--active", "pane-tabs--bar"}
    ALLOW_SELECT = False

    active: reactive[int] = reactive(0, init=False)
    bar_start: reactive[float] = reactive(0.0, init=False)
    bar_end: reactive[float] = reactive(0.0, init=False)
    hover: reactive[int | None] = reactive(None, init=False)

    class Chosen(Message):
        """A tab was clicked: show pane `index`."""

        def __init__(self, index: int) -> None:
            self.index = index
            super().__init__()

    def __init__(self, labels: list[str], active: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.labels = labels
        self.spans: list[tuple[int, int]] = []  # each label's cells [start, end), its padding outside
        x = 0
        for label in labels:
            self.spans.append((x + 1, x + 1 + len(label)))
            x += len(label) + 2
        self.set_reactive(PaneTabs.active, active)
        self.set_reactive(PaneTabs.bar_start, float(self.spans[active][0]))
        self.set_reactive(PaneTabs.bar_end, float(self.spans[active][1]))

    def watch_active(self, active: int) -> None:
        start, end = self.spans[active]
        if self.app.animation_level == "none":
            self.bar_start, self.bar_end = start, end
        else:  # Textual's Underline: 0.3 s, "basic" animations
            self.animate("bar_start", float(start), duration=0.3, level="basic")
            self.animate("bar_end", float(end), duration=0.3, level="basic")
        self.refresh()

    def _offset(self, width: int) -> int:
        """Where the visible cells start: the active label centred when the labels do not fit."""
        total = self.spans[-1][1] + 1
        if total <= width:
            return 0
        start, end = self.spans[self.active]
        return max(0, min(total - width, (start + end) // 2 - width // 2))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        total = max(width, self.spans[-1][1] + 1)
        base = Style(bgcolor=self.rich_style.bgcolor)
        if y == 0:
            segments = []
            for i, label in enumerate(self.labels):
                part = ("active" if i == self.active else "hover" if i == self.hover else "tab")
                style = base + self.get_component_rich_style(f"pane-tabs--{part}")
                segments += [Segment(" ", base), Segment(label, style), Segment(" ", base)]
            segments.append(Segment(" " * (total - self.spans[-1][1] - 1), base))
        elif y == 1:
            bar = self.get_component_rich_style("pane-tabs--bar")
            rendered = self.app.console.render(
                Bar((self.bar_start, self.bar_end), Style.from_color(bar.color), Style.from_color(bar.bgcolor),
                    width=total), self.app.console.options.update_width(total))
            segments = [Segment(text, base + style if style else base) for text, style, _ in rendered
                        if text and text != "\n"]
        else:
            return Strip.blank(width, base)
        offset = self._offset(width)
        return Strip(segments).crop_extend(offset, offset + width, base)

    def _index_at(self, x: int) -> int | None:
        x += self._offset(self.size.width)
        for i, (start, end) in enumerate(self.spans):
            if start - 1 <= x <= end:
                return i
        return None

    def on_click(self, event: events.Click) -> None:
        event.stop()
        index = self._index_at(event.x)
        if index is not None:
            self.post_message(self.Chosen(index))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover = self._index_at(event.x) if event.y == 0 else None

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None

    def watch_hover(self) -> None:
        self.refresh()
