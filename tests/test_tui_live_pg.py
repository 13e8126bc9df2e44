"""The live app against a real throwaway cluster: every pane gets data from the real sampler.

Also the end-to-end run in tmux: `pgio-tui live` at 80x24 in a real terminal, keys sent with
send-keys, the screen read with capture-pane (skipped without tmux).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
from textual.widgets import DataTable
from tui_support import text_of, wait_for

from pgio_tui.sampler import Sampler
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.lines import LinesView


def _load(cluster, stop: threading.Event) -> None:
    """Writes that dirty buffers and commit often: something for every pane to show."""
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS tui_load (id int PRIMARY KEY, v text)")
        i = 0
        while not stop.is_set():
            conn.execute("INSERT INTO tui_load SELECT g, repeat('x', 200) FROM generate_series(%s::int, %s::int) g "
                         "ON CONFLICT (id) DO UPDATE SET v = excluded.v", (i % 50_000, i % 50_000 + 999))
            i += 1000
            if i % 20_000 == 0:
                conn.execute("CHECKPOINT")


@pytest.mark.asyncio
async def test_live_app_populates_panes_from_a_real_cluster(make_cluster, tmp_path):
    cluster = make_cluster(checkpoint_timeout="30s")
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    stop = threading.Event()
    load = threading.Thread(target=_load, args=(cluster, stop), daemon=True)
    load.start()
    path = tmp_path / "live.pgio"
    try:
        feed = LiveFeed(sampler, record_path=str(path))
        app = MonitorApp(session_from_sampler(sampler), source=feed)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 6, timeout=30)
            await pilot.pause(0.5)
            scr = app.monitor
            assert scr.layout_name == "grid3"
            status = text_of(scr.query_one("#status", LinesView))
            assert f"PG {sampler.pg.features.version.split()[0]}" in status and "REC live.pgio" in status
            h = app.history
            assert h.has("writes.backend") or h.has("writes.checkpointer") or h.has("writes.bgwriter")
            assert h.has("checkpoint.time_progress") and h.has("latency.tps")
            ckpt = scr.query_one("#checkpoint").section_text("text")
            assert "WAL" in ckpt and "time" in ckpt
            if sampler.os_mode != "none":
                assert h.has("mem.dirty_kb") and h.devices
                assert "OS metrics" not in scr.query_one("#memory").section_text("chart")
                table = scr.query_one("#devices").section_text("table")
                assert next(iter(h.devices)) in table
            writes = scr.query_one("#writes").section_text("chart")
            assert "rates start" not in writes  # the chart has data
            assert "tps" in scr.query_one("#latency").section_text("chart")
            waits = scr.query_one("#waits").section_text("bars")
            assert waits.strip()  # bars, or the reason there are none
            await pilot.press("B")  # Backends: the loader's backend writes (WAL, /proc/<pid>/io on this host)
            t, rows, _ = h.backends_at()
            writers = [b for b in rows if b["backend_type"] == "client backend" and (b["write_bytes_s"] or 0) > 0]
            assert writers and sampler.backends.proc_mode == "local"
            table = app.screen.query_one(DataTable)
            assert str(writers[0]["pid"]) in {k.value for k in table.rows}
            await pilot.press("escape")
            await pilot.press("q")
        assert feed.wait_closed(10)
    finally:
        stop.set()
        load.join(10)
        sampler.close()
    from pgio_tui.store.reader import Recording
    with Recording(path) as rec:
        assert rec.tick_count >= 6


TMUX = ["tmux", "-L", "pgio-tui-tests"]  # a server of our own: never touches the user's sessions


def _tmux(*args) -> str:
    return subprocess.run([*TMUX, *args], check=True, capture_output=True, text=True).stdout


def _wait_screen(target: str, predicate, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while True:
        screen = _tmux("capture-pane", "-p", "-t", target)
        if predicate(screen):
            return screen
        if time.monotonic() > deadline:
            size = _tmux("display", "-p", "-t", target, "#{window_width}x#{window_height}")
            raise AssertionError(f"screen ({size.strip()}) never matched; last:\n{screen}")
        time.sleep(0.2)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_end_to_end_in_tmux(make_cluster, tmp_path):
    cluster = make_cluster()
    target = f"e2e-{time.monotonic_ns()}"
    rec = tmp_path / "e2e.pgio"
    # timeout --foreground: the app must stay in the terminal's foreground process group to read it.
    # env -u: under pytest the C-level environment can hold COLUMNS/LINES (not in os.environ), which
    # tmux passes on and shutil.get_terminal_size prefers over the real size: resizes would be missed.
    cmd = (f"cd {tmp_path} && env -u COLUMNS -u LINES XDG_CONFIG_HOME={tmp_path} timeout --foreground 90 "
           f"{sys.executable} -m pgio_tui "
           f"live '{cluster.conninfo()}' --interval 0.5 --record {rec}; echo exited $?; sleep 30")
    _tmux("new-session", "-d", "-s", target, "-x", "80", "-y", "24", cmd)
    try:
        screen = _wait_screen(target, lambda s: "1 Checkpoint" in s and "● REC" in s)
        assert "Quit" in screen.splitlines()[-1]  # the footer
        _tmux("send-keys", "-t", target, "4")
        _wait_screen(target, lambda s: "4 Devices" in s)
        _tmux("send-keys", "-t", target, "Space")
        _wait_screen(target, lambda s: "PAUSED" in s)
        _tmux("send-keys", "-t", target, "Space")
        _tmux("send-keys", "-t", target, *["+"] * 8, "-")  # in to the shortest step (10 s), one out
        _wait_screen(target, lambda s: "⧗20s" in s and "PAUSED" not in s)
        _tmux("resize-window", "-t", target, "-x", "200", "-y", "60")
        screen = _wait_screen(target, lambda s: "6 Waits" in s and "1 Checkpoint" in s and "4 Devices" in s)
        assert "Ckpt  2 Writes" not in screen  # no tabs: every pane at once
        _tmux("send-keys", "-t", target, "q")
        _wait_screen(target, lambda s: "exited 0" in s)
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", target], capture_output=True)
    from pgio_tui.store.reader import Recording
    with Recording(rec) as r:
        assert r.tick_count >= 2
        assert r.events()[-1].event.kind == "stop"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_dropped_terminal_closes_the_recording_and_exits(make_cluster, tmp_path):
    """An ssh link that drops: the terminal vanishes and SIGHUP arrives. The recording must be
    closed cleanly and the process must not linger (Textual can hang writing to a dead pty)."""
    cluster = make_cluster()
    rec = tmp_path / "drop.pgio"
    server = [*TMUX[:2], f"pgio-tui-drop-{time.monotonic_ns()}"]
    cmd = (f"exec env -u COLUMNS -u LINES XDG_CONFIG_HOME={tmp_path} {sys.executable} -m pgio_tui live "
           f"'{cluster.conninfo()}' --interval 0.5 --record {rec}")
    subprocess.run([*server, "new-session", "-d", "-s", "a", "-x", "80", "-y", "24", cmd], check=True)
    pid = int(subprocess.run([*server, "display", "-p", "-t", "a", "#{pane_pid}"], capture_output=True,
                             text=True, check=True).stdout)
    try:
        deadline = time.monotonic() + 20
        while not (rec.exists() and rec.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)
        subprocess.run([*server, "kill-server"], capture_output=True)  # the terminal is gone
        deadline = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid), "pgio-tui still running 15 s after its terminal went away"
    finally:
        if _alive(pid):
            os.kill(pid, 9)
        subprocess.run([*server, "kill-server"], capture_output=True)
    from pgio_tui.store.reader import Recording
    with Recording(rec) as r:
        assert r.tick_count >= 2
        assert r.events()[-1].event.kind == "stop" and "SIGHUP" in r.events()[-1].event.text


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
