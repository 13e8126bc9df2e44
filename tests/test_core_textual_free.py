"""The core never imports Textual: headless record, export and diff must run without loading the TUI.

Each check runs in a fresh interpreter, so nothing imported by other tests can hide an import.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pgio_tui

ROOT = Path(__file__).resolve().parent.parent


def core_modules() -> list[str]:
    """Every pgio_tui module outside pgio_tui.tui (and __main__, which runs the CLI when imported)."""
    names = ["pgio_tui"]
    for info in pkgutil.walk_packages(pgio_tui.__path__, "pgio_tui."):
        if info.name == "pgio_tui.tui" or info.name.startswith("pgio_tui.tui.") or info.name == "pgio_tui.__main__":
            continue
        names.append(info.name)
    return names


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_core_modules_do_not_import_textual():
    modules = core_modules()
    assert "pgio_tui.sampler" in modules and "pgio_tui.store.writer" in modules
    r = run_python(f"""
        import importlib, sys
        for name in {modules!r}:
            importlib.import_module(name)
            if "textual" in sys.modules:
                print("textual imported by", name)
                sys.exit(1)
    """)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("argv", [["record", "--help"], ["export", "--help"]])
def test_headless_commands_do_not_import_textual(argv):
    r = run_python(f"""
        import sys
        from pgio_tui.cli import main
        try:
            main({argv!r})
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
        assert "textual" not in sys.modules, "textual was imported"
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "usage:" in r.stdout


def test_the_tui_does_import_textual():
    """The check above can fail: the TUI package really does pull Textual in."""
    r = run_python("""
        import sys
        import pgio_tui.tui.app
        assert "textual" in sys.modules
    """)
    assert r.returncode == 0, r.stdout + r.stderr
