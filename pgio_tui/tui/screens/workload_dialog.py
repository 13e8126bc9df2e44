"""The workload dialog: pgbench or pgio with their common options, checked before anything starts.

The dialog only gathers text; `build(kind, fields)` (the app's, over workloads.launch) turns it into
a workload or a one-line WorkloadError, shown under the fields so the user can fix it in place.
"""

from __future__ import annotations

from typing import Any, Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, TabbedContent, TabPane

from pgio_tui.safe_text import plain_text
from pgio_tui.workloads.base import WorkloadError
from pgio_tui.workloads.launch import PGBENCH_BUILTINS, PGIO_DEFAULTS

# (field, label, default, placeholder) per kind; the defaults make a short, light run.
PGBENCH_FIELDS = (
    ("clients", "clients", "4", ""),
    ("threads", "threads", "2", ""),
    ("duration", "duration (s)", "60", ""),
    ("init_scale", "init scale", "", "empty: no pgbench -i"),
    ("extra", "extra args", "", "e.g. -M prepared --rate 500"),
)
PGIO_FIELDS = tuple((key, label, str(PGIO_DEFAULTS[key]), hint) for key, label, hint in (
    ("schemas", "schemas", ""),
    ("scale", "scale", "blocks, or 64M / 1G"),
    ("sessions", "sessions", "per schema"),
    ("run_time", "run time (s)", ""),
    ("update_pct", "update %", "0, 1-50 or 100"),
    ("work_unit", "work unit", "blocks per statement"),
))  # pgio's defaults, the same as `bench pgio`'s


class WorkloadScreen(ModalScreen[Any]):
    """Returns the built (not started) workload, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    WorkloadScreen { align: center middle; }
    WorkloadScreen > Vertical {
        width: 64; max-width: 100%; height: auto; max-height: 100%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    WorkloadScreen TabbedContent, WorkloadScreen TabPane { height: auto; }
    WorkloadScreen TabPane { padding: 0; }
    WorkloadScreen .row { height: 1; margin-top: 1; }
    WorkloadScreen .row > Label { width: 14; color: $foreground-muted; }
    WorkloadScreen .row > Input, WorkloadScreen .row > Select { width: 1fr; }
    WorkloadScreen Checkbox { margin-top: 1; }
    WorkloadScreen #wl-error { color: $error; height: auto; margin-top: 1; }
    WorkloadScreen #wl-buttons { height: 1; margin-top: 1; align-horizontal: right; }
    WorkloadScreen #wl-buttons Button { margin-left: 2; }
    """

    def __init__(self, build: Callable[[str, dict[str, Any]], Any], *, kind: str = "pgbench",
                 values: dict[str, Any] | None = None):
        super().__init__()
        self.build = build
        self.kind = kind
        self.values = dict(values or {})

    def compose(self) -> ComposeResult:
        v = self.values.get
        with Vertical() as box:
            box.border_title = "Start workload"
            box.border_subtitle = "enter: start · esc: cancel"
            with TabbedContent(initial=self.kind, id="wl-kind"):
                with TabPane("pgbench", id="pgbench"):
                    for key, label, default, hint in PGBENCH_FIELDS:
                        with Horizontal(classes="row"):
                            yield Label(label)
                            yield Input(str(v(key, default)), placeholder=hint, id=f"wl-{key}", compact=True)
                    with Horizontal(classes="row"):
                        yield Label("script")
                        yield Select([(b, b) for b in PGBENCH_BUILTINS], value=v("builtin", PGBENCH_BUILTINS[0]),
                                     allow_blank=False, id="wl-builtin", compact=True)
                with TabPane("pgio", id="pgio"):
                    for key, label, default, hint in PGIO_FIELDS:
                        with Horizontal(classes="row"):
                            yield Label(label)
                            yield Input(str(v(key, default)), placeholder=hint, id=f"wl-{key}", compact=True)
                    yield Checkbox("set up the tables first", value=bool(v("setup", True)), id="wl-setup",
                                   compact=True)
            yield Label("", id="wl-error")
            with Horizontal(id="wl-buttons"):
                yield Button("Start", id="wl-start", variant="primary", compact=True)
                yield Button("Cancel", id="wl-cancel", compact=True)

    def on_mount(self) -> None:
        for inp in self.query(Input):
            inp.cursor_blink = False
        first = "#wl-clients" if self.kind == "pgbench" else "#wl-schemas"
        self.query_one(first, Input).focus()

    # --- reading and checking -------------------------------------------------------------------

    @property
    def active_kind(self) -> str:
        return self.query_one(TabbedContent).active or "pgbench"

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {(inp.id or "").removeprefix("wl-"): inp.value for inp in self.query(Input)}
        out["builtin"] = self.query_one("#wl-builtin", Select).value
        out["setup"] = self.query_one("#wl-setup", Checkbox).value
        return out

    def show_error(self, text: str) -> None:
        self.query_one("#wl-error", Label).update(plain_text(text))

    def action_start(self) -> None:
        kind, fields = self.active_kind, self.fields()
        try:
            workload = self.build(kind, fields)
        except WorkloadError as exc:
            self.show_error(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - said in the dialog, not a crash of the monitor
            self.show_error(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            return
        self.dismiss(workload)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "wl-start":
            self.action_start()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(None)
