"""Modal dialogs: help (its keys generated from the bindings), a one-line prompt (annotation,
recording file), a yes/no confirmation."""

from __future__ import annotations

import textwrap

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from textual.markup import escape

from pgio_tui.safe_text import plain_text
from pgio_tui.tui import panes, views
from pgio_tui.tui.themes import user_themes_dir
from pgio_tui.tui.widgets.degraded import help_section as degraded_section
from pgio_tui.tui.widgets.status import HEADER_FIGURES

HELP_WIDTH = 74  # an 80-column help box minus its border, padding and scrollbar (the help scrolls at 80 x 24)
HELP_KEYS_NOTE = """\
  [b]↑ ↓[/b]          in Devices: choose the device charted
"""

HELP_CHARTS = """\
[b]Reading the charts[/b]
  All charts share one time axis ending at the newest tick. On the axis:
  [b]━[/b] a checkpoint was running   [b]▲[/b] annotation   [b]◆[/b] setting changed
  [b]╳[/b] gap / reconnect / restart   [b]▶ ■[/b] workload start / stop
  The left gutter is the scale of the first series; a legend value with
  [b]/N[/b] has its own scale (tps beside latency ms, util % beside await ms).
  A threshold marked [b]↑[/b] is above the scale.
"""
HELP_THEMES = """\
[b]Themes[/b]
  Built-in Textual themes, the bundled pgio-dark and pgio-light, and
  *.toml files in the user themes folder:
  $themes
"""


def help_paragraphs(title: str, items: list[tuple[str, str]], width: int = HELP_WIDTH) -> str:
    """A help section as markup: each (head, plain text) a paragraph, the head in bold, wrapped
    under itself to `width`."""
    out = [f"[b]{title}[/b]"]
    for head, text in items:
        lines = textwrap.wrap(f"{head} {text}", width - 2, initial_indent="  ", subsequent_indent="     ")
        out.append(f"  [b]{escape(head)}[/b]{escape(lines[0][2 + len(head):])}")
        out += [escape(line) for line in lines[1:]]
    return "\n".join(out) + "\n"


HELP_READING = "\n".join([HELP_CHARTS, help_paragraphs("Header", list(HEADER_FIGURES)),
                           help_paragraphs("Panes", panes.help_items()),
                           help_paragraphs("Views", views.help_items()), HELP_THEMES])


def help_keys(active_bindings) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen, from Textual's active bindings: the enabled ones
    with a tooltip (the first of a pair carries it: + and - are one line); bindings with the same
    tooltip share a line ("1-6 ...", "← → ...")."""
    lines: dict[str, list[str]] = {}
    for active in active_bindings:
        b = active.binding
        if not active.enabled or not b.tooltip or b.system:
            continue
        keys = lines.setdefault(b.tooltip, [])
        shown = b.key_display or b.key.split(",")[0]
        if shown not in keys:
            keys.append(shown)
    return [(" ".join(keys), text) for text, keys in lines.items()]


def help_text(keys: list[tuple[str, str]], keys_note: str = HELP_KEYS_NOTE, reading: str = HELP_READING) -> Content:
    """The keys (plain text: a tooltip is never markup), then the notes (markup; $themes is the
    user themes folder)."""
    width = max([len(k) for k, _ in keys] + [11]) + 2
    rows = []
    for k, text in keys:  # wrapped under itself, so the help reads at 80 columns
        parts = textwrap.wrap(text, max(20, HELP_WIDTH - 2 - width)) or [""]
        rows.append(Content.assemble("  ", (k, "bold"), " " * (width - len(k)), parts[0], "\n"))
        rows += [Content.assemble(" " * (2 + width), part, "\n") for part in parts[1:]]
    return Content.assemble(("Keys", "bold"), "\n", *rows, Content.from_markup(keys_note), "\n",
                            Content.from_markup(reading, themes=str(user_themes_dir())))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 80; max-width: 100%; height: auto; max-height: 100%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, keys: list[tuple[str, str]], *, title: str = "pgio-tui help",
                 keys_note: str = HELP_KEYS_NOTE, reading: str = HELP_READING, notes: list[str] | None = None):
        super().__init__()
        self.keys, self.title_text, self.keys_note, self.reading = keys, title, keys_note, reading
        self.notes = notes  # what is degraded in this session, listed first (None: not a session)

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = self.title_text
            box.border_subtitle = "esc to close"
            if self.notes is not None:
                yield Static(degraded_section(self.notes), id="help-degraded")
            yield Static(help_text(self.keys, self.keys_note, self.reading))


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; Enter returns it, Escape returns None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical {
        width: 72; max-width: 100%; height: auto; border: round $primary; background: $surface; padding: 0 1;
    }
    PromptScreen #prompt-hint { color: $foreground-muted; width: 100%; height: auto; }
    """

    def __init__(self, title: str, value: str = "", hint: str = "", placeholder: str = ""):
        super().__init__()
        self.title_text, self.value, self.hint, self.placeholder = title, value, hint, placeholder

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = plain_text(self.title_text)
            box.border_subtitle = "enter: ok · esc: cancel"
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            if self.hint:  # wrapped to the box, not cut (replay's jump hint is wider than 68 columns)
                yield Static(plain_text(self.hint), id="prompt-hint")

    def on_mount(self) -> None:
        inp = self.query_one(Input)
        inp.cursor_blink = False
        inp.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape,n", "answer(False)", "No"), Binding("y", "answer(True)", "Yes")]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 60; max-width: 100%; height: auto; border: round $warning; background: $surface; padding: 0 1;
    }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 1; }
    """

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(plain_text(self.question))
            with Horizontal():
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
