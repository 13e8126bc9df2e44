"""Smaller trust fixes (issue 10, finding 7): recordings private, --force never replaces what is not
a recording, nan/inf durations refused, strict JSON, and a copy without its -wal still useful and
said to be incomplete; a truncated file says so."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

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


# --- an -shm made immutable mid-recording (issue 21 row 16) -------------------------------------

def _chattr(flag: str, path) -> bool:
    """chattr FLAG PATH; False when the command or the file system cannot (then the test skips)."""
    if shutil.which("chattr") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


@pytest.fixture
def unfreeze():
    frozen_paths = []
    yield frozen_paths
    for p in frozen_paths:
        _chattr("-i", p)
        _chattr("-a", p)


RECORD_THEN_FREEZE = """
import subprocess, sys
sys.path.insert(0, "tests")
from fixture_recording import synthetic_frames
from pgio_tui.store.writer import Recorder, RecordingError
path = sys.argv[1]
rec = Recorder(path)
frames = list(synthetic_frames(10))
for f in frames[:5]:
    rec.write(f)
rec.flush()
subprocess.run(["chattr", sys.argv[2], path + "-shm"], check=True)
try:
    for f in frames[5:]:
        rec.write(f)
    rec.flush()
except RecordingError as e:
    print(e)
rec.close()
print("closed")
"""


@pytest.mark.parametrize("flag", ["+i", "+a"])
def test_frozen_shm_stops_the_recorder_in_one_line(tmp_path, unfreeze, flag):
    """chattr +i (or +a) on the -shm mid-recording killed the recorder with SIGBUS and no message: now
    the next commit says so in one line, the file is closed and holds the ticks written before."""
    probe = tmp_path / "probe"
    probe.touch()
    if not _chattr(flag, probe):
        pytest.skip("chattr is not available here (not root, or a file system without the flags)")
    _chattr("-" + flag[1], probe)
    path = tmp_path / "r.pgio"
    unfreeze.append(f"{path}-shm")
    r = subprocess.run([sys.executable, "-c", RECORD_THEN_FREEZE, str(path), flag], capture_output=True, text=True,
                       timeout=60, cwd=Path(__file__).parents[1])
    assert r.returncode == 0, (r.returncode, r.stderr[-500:])  # not -7 (SIGBUS)
    lines = r.stdout.splitlines()
    assert lines == [f"cannot write recording {path}: its -shm file was made immutable or append-only (chattr "
                     "+i/+a) while recording: stopped; the ticks so far are kept", "closed"], r.stdout
    _chattr("-" + flag[1], f"{path}-shm")
    with Recording(path) as rec:
        assert rec.tick_count == 5


@pytest.mark.pg
def test_record_with_a_frozen_shm_ends_in_one_line(pg_cluster, tmp_path, unfreeze):
    """The same through `pgio-tui record` against a real server: exit 1, one `pgio-tui: error:` line."""
    path = tmp_path / "r.pgio"
    shm = Path(f"{path}-shm")
    unfreeze.append(shm)
    proc = subprocess.Popen([sys.executable, "-m", "pgio_tui", "record", "-h", str(pg_cluster.sockdir), "-p",
                             str(pg_cluster.port), "-U", "postgres", "-o", str(path), "--interval", "0.2",
                             "--duration", "30", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=Path(__file__).parents[1])
    try:
        for _ in range(150):  # the file and some ticks, at most 15 s
            if shm.exists() and shm.stat().st_size:
                break
            time.sleep(0.1)
        time.sleep(1)
        if not _chattr("+i", shm):
            pytest.skip("chattr is not available here (not root, or a file system without the flags)")
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = err.strip().splitlines()
    assert proc.returncode == 1, (proc.returncode, err[-500:])
    assert len(lines) == 1 and lines[0].startswith("pgio-tui: error: cannot write recording "), err
    assert "made immutable or append-only" in lines[0]
    _chattr("-i", shm)
    with Recording(path) as rec:
        assert rec.tick_count >= 3
