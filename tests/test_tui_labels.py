"""Texts on screen say what they are and are never cut mid-word or glued: wait-event names, device
columns, the 80x24 vitals line, the help screen at 80 columns, and one name for the server."""

from __future__ import annotations

import re

from fixture_recording import synthetic_frames

from pgio_tui.frame import Frame
from pgio_tui.naming import connection_text, server_name
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.screens.dialogs import HELP_WIDTH, help_text
from pgio_tui.tui.screens.monitor import MonitorScreen
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.devices_pane import DevicesPane
from pgio_tui.tui.widgets.pane import View
from pgio_tui.tui.widgets.status import Vitals
from pgio_tui.tui.widgets.waits_pane import WaitsPane


def text(line) -> str:
    return "".join(t for t, _ in line)


def view_of(frames, width_s: float = 300) -> View:
    h = FrameHistory()
    h.extend(frames)
    return View(h, SessionInfo(), h.end_t - width_s, h.end_t)


def test_wait_event_names_get_the_room_they_need():
    frames = list(synthetic_frames(60))
    for f in frames:
        f.waits = [("client backend", "LWLock", "WALWrite", 2), ("checkpointer", "Timeout", "CheckpointWriteDelay", 1),
                   ("autovacuum worker", "Timeout", "VacuumDelay", 1)]
    lines = [text(ln) for ln in WaitsPane.bar_lines(view_of(frames), 52, 10)[1:]]
    assert any("LWLock:WALWrite (client)" in ln for ln in lines), lines
    assert any("CheckpointWriteDelay (ckpt)" in ln for ln in lines), lines  # type dropped before the event
    assert len({ln.split("  ")[0] for ln in lines}) == len(lines)  # no two rows read the same


def test_device_columns_never_glue():
    t = 1_800_000_000.0
    frames = [Frame(tick=i, t=t + i, elapsed=float(i), dt=1.0,
                    devices={"sda": {"r_s": 0.0, "w_s": 0.0, "rkb_s": 0.0, "wkb_s": 0.0, "r_await_ms": 0.0,
                                     "w_await_ms": 0.0, "aqu_sz": 0.001, "util_pct": 0.0}},
                    device_roles={"sda": "data"}) for i in range(3)]
    view = view_of(frames)
    pane = DevicesPane()
    for width in (40, 60, 80):
        row = text(pane.table_lines(view, ["sda"], width)[1])
        assert not re.search(r"\d\.\d+\.\d", row), row  # "0.000.001": two numbers glued


def test_vitals_name_their_writers_and_drop_whole_groups():
    frames = list(synthetic_frames(30))
    view = view_of(frames)
    line = text(Vitals.line(view, 80))
    assert "wr/s ckpt " in line and " backend " in line
    assert len(line) <= 80
    full = text(Vitals.line(view, 300))
    for group in line.split(" │ "):  # every group shown is shown whole
        assert group.strip() in full


def test_help_fits_80_columns():
    keys = [(b.key_display or b.key.split(",")[0], b.tooltip)
            for b in (*MonitorApp.BINDINGS, *MonitorScreen.BINDINGS) if getattr(b, "tooltip", "")]
    lines = [ln for ln in str(help_text(keys)).splitlines() if "pgio-tui/themes" not in ln]  # a path is a path
    assert len(lines) > 20
    widest = max(lines, key=len)
    assert len(widest) <= HELP_WIDTH == 74, widest  # 80 minus the help box's border, padding and scrollbar


def test_one_name_for_the_server():
    socket = {"host": "/var/run/postgresql", "port": "5432", "dbname": "bench", "client_host": "db1"}
    loopback = {**socket, "host": "127.0.0.1"}
    remote = {**socket, "host": "vm", "port": "5433"}
    assert server_name(socket) == server_name(loopback) == "db1/bench"
    assert server_name(remote) == "vm:5433/bench"
    assert SessionInfo(host="/var/run/postgresql", dbname="bench", client_host="db1").target == "db1/bench"
    empty = connection_text({**socket, "conninfo": "", "user": "postgres"})
    assert "postgres@db1/bench" in empty and "PG* variables" in empty
