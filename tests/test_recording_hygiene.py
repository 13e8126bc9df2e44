"""Smaller trust fixes (issue 10, finding 7): recordings private, --force never replaces what is not
a recording, nan/inf durations refused, strict JSON, and a copy without its -wal still useful and
said to be incomplete; a truncated file says so."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time

import pytest
from fixture_recording import synthetic_frames

from pgio_tui.cli import build_parser, main
from pgio_tui.store import writer as writer_mod
from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.store.writer import Recorder


def test_recording_and_its_wal_are_private(tmp_path):
    path = tmp_path / "r.pgio"
    umask = os.umask(0o022)  # the usual one: files 0644 unless we say otherwise
    try:
        with Recorder(path) as rec:
            for f in synthetic_frames(3):
                rec.write(f)
            rec.flush()
            for p in (path, tmp_path / "r.pgio-wal", tmp_path / "r.pgio-shm"):
                assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    finally:
        os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="replacing /dev/null needs root to matter")
def test_force_never_replaces_a_device(tmp_path):
    with pytest.raises(RecordingError, match="not a regular file"):
        Recorder("/dev/null", force=True)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    link = tmp_path / "link.pgio"
    link.symlink_to("/dev/null")
    with pytest.raises(RecordingError, match="not a regular file"):
        Recorder(link, force=True)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert main(["record", "-o", "/dev/null", "--force"]) == 1  # refused before connecting
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("argv", [
    ["record", "-o", "x.pgio", "--duration", "nan"],
    ["record", "-o", "x.pgio", "--duration", "inf"],
    ["demo", "--duration", "nan"],
    ["bench", "pgio", "--run-time", "nan"],
    ["bench", "pgio", "--run-time", "inf"],
    ["replay", "x.pgio", "--speed", "nan"],
])
def test_nan_and_inf_are_not_durations(argv, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert "not nan or inf" in capsys.readouterr().err


def test_json_export_is_strict(fixture_file, tmp_path, capsys):
    import sqlite3
    path = tmp_path / "inf.pgio"
    shutil.copyfile(fixture_file, path)
    with sqlite3.connect(path) as c:
        c.execute('UPDATE ticks SET "mem.dirty_kb" = 9e999, "latency.p99_ms" = -9e999')
    assert main(["export", str(path), "--format", "json", "--metrics", "mem.*"]) == 0
    rows = [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
            for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["mem.dirty_kb"] is None for r in rows)


def test_copy_without_wal_holds_all_but_the_last_seconds(tmp_path, monkeypatch, capsys):
    """The writer checkpoints its WAL into the file every CHECKPOINT_EVERY_S; a copy of the file
    alone (as after a SIGKILL, taken without the -wal) holds the ticks up to the last checkpoint."""
    monkeypatch.setattr(writer_mod, "CHECKPOINT_EVERY_S", 0.3)
    path = tmp_path / "live.pgio"
    rec = Recorder(path, meta={"interval_s": 1.0})
    frames = synthetic_frames(20)
    for i, f in enumerate(frames):
        rec.write(f)
        rec.flush()
        if i == 9:
            time.sleep(0.4)  # the next commit checkpoints ticks 0..10 into the file
    copy = tmp_path / "copy.pgio"
    shutil.copyfile(path, copy)  # the -wal is left behind, as by a careless copy after a crash
    rec.close()
    with Recording(copy) as r:
        assert r.tick_count >= 10 and "last seconds" in r.note
    assert main(["info", str(copy)]) == 0
    assert "no -wal file beside it" in capsys.readouterr().out


def test_truncated_file_says_its_end_is_missing(fixture_file, tmp_path, capsys):
    data = fixture_file.read_bytes()
    cut = tmp_path / "cut.pgio"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["info", str(cut)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"pgio-tui: error: {cut}: the file is truncated") and "end is missing" in err
