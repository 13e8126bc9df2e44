"""`pgio-tui replay` on files it must refuse (one line on stderr, exit 1), an older schema it must
read, and the recording picker."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_recording import write_fixture

from pgio_tui.cli import main
from pgio_tui.store import schema
from pgio_tui.store.listing import list_recordings
from pgio_tui.store.moments import find_moments
from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.tui.replay import ReplayApp
from pgio_tui.tui.screens.picker import PickerApp

ROOT = Path(__file__).resolve().parent.parent
FROZEN_V1 = ROOT / "tests" / "data" / "recordings" / "fixture-v1.sqlite"


def newer(tmp_path):
    path = write_fixture(tmp_path / "newer.pgio", n=10)
    with sqlite3.connect(path) as c:
        c.execute("UPDATE meta SET value = 99 WHERE key = 'schema_version'")
    return path


def other_sqlite(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t (x)")
    return path


def garbage(tmp_path):
    path = tmp_path / "garbage.pgio"
    path.write_bytes(os.urandom(8192))
    return path


def empty(tmp_path):
    path = tmp_path / "empty.pgio"
    path.write_bytes(b"")
    return path


@pytest.mark.parametrize("make, expect", [
    (newer, "newer pgio-tui (schema 99"), (other_sqlite, "SQLite file but not a pgio-tui recording"),
    (garbage, "not an SQLite file"), (empty, "not a pgio-tui recording"),
    (lambda tmp: tmp / "missing.pgio", "no such file")])
def test_refused_with_one_line(tmp_path, capsys, make, expect):
    path = make(tmp_path)
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pgio-tui: error: ") and expect in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_refused_by_the_real_command(tmp_path):
    """The installed entry point, end to end: no traceback, exit 1, one line."""
    r = subprocess.run([sys.executable, "-m", "pgio_tui", "replay", str(garbage(tmp_path))], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not an SQLite file" in r.stderr


def test_bad_start_and_empty_folder(tmp_path, capsys, monkeypatch):
    path = write_fixture(tmp_path / "ok.pgio", n=10)
    assert main(["replay", str(path), "--start", "whenever"]) == 1
    assert "--start" in capsys.readouterr().err
    (tmp_path / "none").mkdir()
    assert main(["replay", str(tmp_path / "none")]) == 1
    assert "no recordings in" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path / "none")
    assert main(["replay"]) == 1
    assert "no FILE given" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_frozen_v1_replays():
    with Recording(FROZEN_V1) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.press("G")
            assert app.history.last.tick == rec.last_tick
            await pilot.press("g", "n")
            assert app.player.moments and app.history.last.tick == app.player.tick > 0


@pytest.mark.asyncio
async def test_older_schema_replays_migrated(tmp_path):
    """A file of an older schema (the frozen schema-1 sample) replays through the migration."""
    path = tmp_path / "old.pgio"
    path.write_bytes(FROZEN_V1.read_bytes())
    before = path.read_bytes()
    with Recording(path) as rec:
        assert rec.schema_version == 1 < schema.SCHEMA_VERSION
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.workers.wait_for_complete()  # the moments worker migrates its own copy
            await pilot.press("n", "n")
            second = find_moments(rec)[2]  # the second moment after the start, whatever this file holds
            assert app.history.last.tick == app.player.tick == second.tick > 5
    assert path.read_bytes() == before


def test_listing(tmp_path):
    write_fixture(tmp_path / "a.pgio", n=30)
    garbage(tmp_path)
    (tmp_path / "notes.txt").write_text("not listed")
    infos = list_recordings(tmp_path)
    assert [i.path.name for i in infos] == ["a.pgio", "garbage.pgio"]
    a, bad = infos
    assert a.host == "fixture-host" and a.workload == "pgbench" and 28 <= a.duration <= 30 and not a.error
    assert "not an SQLite file" in bad.error
    with pytest.raises(RecordingError):
        list_recordings(tmp_path / "nowhere")


@pytest.mark.asyncio
async def test_picker_opens_the_chosen_row(tmp_path):
    write_fixture(tmp_path / "a.pgio", n=30)
    garbage(tmp_path)
    app = PickerApp(str(tmp_path), list_recordings(tmp_path))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.press("down", "enter")  # the garbage row: refused, the picker stays
        assert app.is_running
        await pilot.press("up", "enter")
    assert app.return_value == str(tmp_path / "a.pgio")
