"""Start-up imports only what the first frame needs (issues 13, 28; bench/first_frame.py measures the time).

Each check runs a fresh interpreter, imports what a command imports before its first frame, and
lists the modules it should not have loaded: the other commands' work, the screens a key opens
later, the recorder, and for live the server's library (psycopg, the sampler: its connection
thread imports them once the monitor has painted). A module named here that turns up again is an
import to make lazy again. The last check runs `pgio-tui live` itself on a terminal against a real
server and lists what was loaded at its first paint.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from pgio_tui.tui import textual_private

ROOT = Path(__file__).resolve().parent.parent

# The server's library and what reads the server: live's connection thread imports them after the first paint.
SERVER = ["psycopg", "pgio_tui.sampler", "pgio_tui.sources.postgres", "pgio_tui.sources.pgfeatures",
          "pgio_tui.sources.checkpoint"]

# Behind a key, a command or an option of their own: none is drawn in the first frame.
LATER = ["sqlite_utils", "numpy", "pgio_tui.store.writer", "textual.widgets._data_table", "textual.widgets._tabs",
         "textual.widgets._footer",
         "pgio_tui.tui.screens.statements", "pgio_tui.tui.screens.backends", "pgio_tui.tui.screens.checkpoints",
         "pgio_tui.tui.screens.io_view", "pgio_tui.tui.screens.view_screen", "pgio_tui.tui.screens.dialogs",
         "pgio_tui.tui.screens.workload_dialog", "pgio_tui.tui.screens.picker", "pgio_tui.tui.diff_screen",
         "pgio_tui.experiments.runner", "pgio_tui.experiments.report", "pgio_tui.export.prometheus",
         "pgio_tui.analysis.compare", "pgio_tui.analysis.report", "pgio_tui.workloads.pgbench",
         "pgio_tui.workloads.cluster"]

# The other commands' parsers take their defaults from these; main builds only the one it runs.
OTHER_COMMANDS = ["pgio_tui.workloads", "pgio_tui.experiments", "pgio_tui.analysis"]

# Standard modules only a report (html) or a recording's command line (shlex) needs; and what
# importlib.resources brings (zipfile) for a theme folder that is a plain folder. psycopg imports
# importlib.metadata, which imports importlib.resources: only replay can start without them.
REPORTS = ["html"]
RESOURCES = ["importlib.resources", "zipfile"]

CASES = {
    # the whole command line (--help): nothing of the TUI, the server or the store
    "cli": ("import pgio_tui.cli as c; c.build_parser()",
            ["textual", "psycopg", "sqlite_utils", "pgio_tui.tui", "pgio_tui.store", "pgio_tui.sampler"]),
    # live's command line, --interval checked: not the sampler (psycopg), which the connect thread imports
    "parse": ("import pgio_tui.cli as c; c.build_parser('live').parse_args(['live', '--interval', '1'])",
              ["textual", "psycopg", "pgio_tui.sampler", "pgio_tui.sources.postgres", "pgio_tui.tui.app"]),
    # the live monitor: its parser, its command, the sampler and the TUI up to the monitor screen
    "live": ("import pgio_tui.cli as c; c.build_parser('live')\n"
             "import pgio_tui.commands.live, pgio_tui.session, pgio_tui.tui.live",
             LATER + OTHER_COMMANDS + REPORTS + SERVER + ["shlex"]),
    # replay of a file: the reader opens it and the replay app reads its first window; no server
    # library, and no sqlite-utils (it may pull in numpy): reading needs only sqlite3
    "replay": ("import pgio_tui.cli as c; c.build_parser('replay')\n"
               "import pgio_tui.commands.replay\n"
               "from pgio_tui.store.reader import Recording\n"
               "from pgio_tui.tui.replay import ReplayApp\n"
               "ReplayApp(Recording({recording!r}))",
               LATER + OTHER_COMMANDS + REPORTS + RESOURCES
               + SERVER),
}
OLDER_SCHEMA = ROOT / "tests" / "data" / "recordings" / "fixture-v2.sqlite"  # migrated in memory on open


def loaded(code: str) -> set[str]:
    """The modules `code` loads beyond what the bare interpreter already has at start.

    A site's .pth files may import modules at start-up (a CA injector importing certifi, which
    imports importlib.resources): those are the interpreter's, not the command's.
    """
    return _modules_after(code) - _modules_after("pass")


@functools.cache
def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120,
                         check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_a_command_built_alone_has_the_same_parser():
    """main builds only the command it runs: that parser is the one the whole command line has."""
    import argparse

    from pgio_tui.cli import build_parser

    def commands(parser):
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    whole = commands(build_parser())
    assert len(whole) == 13
    for name, parser in whole.items():
        alone = commands(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == parser.format_help()


@pytest.mark.parametrize("case", [*CASES, "replay of an older schema"])
def test_start_up_leaves_out_what_the_first_frame_does_not_need(case, fixture_file):
    code, unwanted = CASES[case.split()[0]]
    modules = loaded(code.format(recording=str(OLDER_SCHEMA if "older" in case else fixture_file)))
    assert "pgio_tui.cli" in modules  # the probe did import something
    present = sorted(m for m in unwanted if m in modules or any(name.startswith(m + ".") for name in modules))
    assert not present, f"{case}: imported before the first frame: {present}"


# `pgio-tui live` with two marks patched in: the modules loaded at the monitor's first paint (the
# moment the connection thread is let go) and when its first sample has been taken.
PAINT_PROBE = """
import json, sys, threading, time
from pgio_tui.tui import feed
out = sys.argv[1]
painted, prime = feed.Connecting.ui_painted, feed.LiveFeed.prime
def ui_painted(self):
    if not hasattr(feed, "painted_at"):
        feed.painted_at = time.monotonic()
        with open(out + ".painted", "w") as fh:
            json.dump({"modules": sorted(sys.modules), "thread": threading.current_thread().name}, fh)
    painted(self)
def primed(self, *args):
    frame = prime(self, *args)
    with open(out + ".primed", "w") as fh:
        json.dump({"after_paint": time.monotonic() - getattr(feed, "painted_at", float("inf"))}, fh)
    return frame
feed.Connecting.ui_painted, feed.LiveFeed.prime = ui_painted, primed
import pgio_tui.cli
sys.exit(pgio_tui.cli.main(["live", sys.argv[2], "--interval", "1"]))
"""


def test_live_paints_before_the_server_library_is_imported(pg_cluster, tmp_path):
    """On a terminal, live paints its header and panes before psycopg and the sampler are imported,
    then connects (let go by Textual's writer thread once the frame is written) and takes its first
    sample; q ends it."""
    out = tmp_path / "mark"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", PAINT_PROBE, str(out), pg_cluster.conninfo()], stdin=slave,
                            stdout=slave, stderr=slave, env=env, cwd=tmp_path, start_new_session=True)
    os.close(slave)
    primed = tmp_path / "mark.primed"
    try:
        limit = time.monotonic() + 60
        while not primed.exists() and proc.poll() is None and time.monotonic() < limit:
            _drain(master, 0.05)
        time.sleep(0.2)  # the file is written whole before the next look
        os.write(master, b"q")
        limit = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < limit:
            _drain(master, 0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        os.close(master)
    probe = json.loads((tmp_path / "mark.painted").read_text())
    painted = set(probe["modules"])
    assert "pgio_tui.tui.screens.monitor" in painted and "textual.app" in painted  # the probe saw the TUI
    # let go once the frame was written: from Textual's writer thread on the fast path's driver
    assert probe["thread"] == ("textual-output" if textual_private.on() else "MainThread")
    present = sorted(m for m in SERVER if m in painted)
    assert not present, f"imported before the first paint: {present}"
    assert json.loads(primed.read_text())["after_paint"] > 0  # connected, and only after the paint
    assert proc.returncode == 0


def _drain(master: int, wait: float) -> None:
    """Read what the app wrote (so it never blocks on a full terminal)."""
    ready, _, _ = select.select([master], [], [], wait)
    if ready:
        try:
            os.read(master, 65536)
        except OSError:
            time.sleep(wait)
