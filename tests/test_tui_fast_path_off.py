"""The TUI without its fast path (pgio_tui/tui/textual_private): Textual's own drawing is a tested
path, not an accident. The key TUI tests run once more in an interpreter where PGIO_TUI_FAST_PATH=off,
against the same snapshots (the same cells, drawn the other way); a Textual outside the tested range
or of another shape turns it off too, and the header says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fixture_recording import synthetic_frames

from pgio_tui.tui import textual_private
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.pane import View
from pgio_tui.tui.widgets.status import HeaderState, StatusBar

HERE = Path(__file__).parent
OFF_RUN = [  # the snapshots of the monitor, the views and replay, and a tick-by-tick screen comparison
    "test_tui_snapshots.py", "test_io_views.py", "test_replay_snapshots.py", "test_tui_pilot.py",
    "test_tui_terminal.py::test_with_the_fast_path_off_textual_paints_every_tick_its_own_way",
]


def test_the_tui_tests_pass_with_the_fast_path_off():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        *(str(HERE / t) for t in OFF_RUN)],
                       env={**os.environ, textual_private.ENV: "off"}, capture_output=True, text=True, timeout=900,
                       cwd=HERE.parent)
    tail = r.stdout[-3000:] + r.stderr[-2000:]
    assert r.returncode == 0 and " passed" in r.stdout, tail
    assert "skipped" not in r.stdout.splitlines()[-1], tail  # the fallback's own test ran too


def _header(width: int) -> str:
    h = FrameHistory()
    h.extend(synthetic_frames(5))
    view = View(h, SessionInfo(host="h", server_version="17.2"), h.end_t - 300, h.end_t)
    return "".join(t for t, _ in StatusBar.line(view, HeaderState(), width))


def test_the_header_says_when_textual_turned_the_fast_path_off(monkeypatch):
    assert textual_private.on() and "slow drawing" not in _header(160)
    monkeypatch.setattr(textual_private, "_off", ["Textual 8.2.3 untested"])  # as _why_off() finds it there
    assert "⚠ slow drawing (Textual 8.2.3 untested)" in _header(160)
    monkeypatch.setattr(textual_private, "_off", [f"{textual_private.ENV}=off"])  # on purpose: no note
    assert "slow drawing" not in _header(160)


def test_the_guard_reads_the_version_and_the_switch(monkeypatch):
    import textual

    assert textual_private.textual_version() == textual.__version__  # read without importlib.metadata
    monkeypatch.setattr(textual_private, "_off", [])
    monkeypatch.setattr(textual_private, "textual_version", lambda: "8.2.6")  # a private signature changed in 8.2.7
    assert textual_private.off() == "Textual 8.2.6 untested"
    monkeypatch.setattr(textual_private, "_off", [])
    monkeypatch.setattr(textual_private, "textual_version", lambda: "8.3.0")
    assert textual_private.off() == "Textual 8.3.0 untested"
    monkeypatch.setattr(textual_private, "_off", [])
    monkeypatch.setenv(textual_private.ENV, "off")
    assert textual_private.off() == f"{textual_private.ENV}=off"
    monkeypatch.delenv(textual_private.ENV)
    monkeypatch.setattr(textual_private, "_off", [])
    monkeypatch.setattr(textual_private, "textual_version", lambda: "8.2.8")
    assert textual_private.off() is None


def test_the_pin_is_the_tested_range():
    text = (HERE.parent / "pyproject.toml").read_text()
    low, high = (".".join(map(str, v)) for v in textual_private.TESTED)
    assert f'"textual>={low},<{high}"' in text
