"""The always-on recorder (`record --rotate`): one file per period on a real cluster, exactly the
files the retention allows left, and the folder replayed as one timeline without a seam at the
rotations, followed while it is written."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_record_faults import conn_args

from pgio_tui.cli import main
from pgio_tui.commands.common import windowed_paths
from pgio_tui.errors import CliError
from pgio_tui.store.player import Player
from pgio_tui.format import parse_size
from pgio_tui.store.rotation import Rotation, expired, file_name, name_time, rotated_files
from pgio_tui.store.timeline import Timeline

INTERVAL, EVERY, KEEP = 0.25, 2.0, 4.0


def rotating(cluster, folder: Path, seconds: float, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pgio_tui", "record", *conn_args(cluster), "-o", str(folder),
                             "--interval", str(INTERVAL), "--duration", str(seconds), "--quiet",
                             "--rotate", f"{EVERY:g}s", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for_file(folder: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = rotated_files(folder)
        if files:
            try:
                with Timeline(folder) as t:
                    if t.tick_count >= 2:
                        return
            except Exception:
                pass
        time.sleep(0.1)
    raise AssertionError(f"{folder}: no ticks")


def seamless(frames) -> None:
    """Consecutive tick numbers one interval apart, and a rate on every tick after the first."""
    for a, b in zip(frames, frames[1:]):
        assert b.tick == a.tick + 1, (a.tick, b.tick)
        assert abs((b.t - a.t) - INTERVAL) < 0.2, (a.tick, b.t - a.t)
        assert b.dt is not None


def test_rotation_retention_and_one_timeline(pg_cluster, tmp_path):
    folder = tmp_path / "always"
    proc = rotating(pg_cluster, folder, 11.5, "--retain", f"{KEEP:g}s")
    wait_for_file(folder)
    with Timeline(folder) as followed:  # opened while the first file is written, followed to the end
        player = Player(followed, speed=1.0)
        assert player.follow
        while proc.poll() is None:
            player.refresh()
            time.sleep(0.2)
        assert proc.returncode == 0, proc.stderr.read()
        while player.refresh():
            pass
        assert not player.follow  # the last file's stop, not a rotation's, ended following
        followed_ticks = [tick for tick, _, _ in followed.rows([])]  # what the followed timeline read
        assert player.end() == followed_ticks[-1]
    assert followed_ticks == list(range(followed_ticks[0], followed_ticks[-1] + 1))

    files = rotated_files(folder)
    # periods start on multiples of EVERY (UTC; a file is named by its first tick, which a busy
    # machine may take a little late); kept: those that ended less than KEEP ago when the newest
    # began, and the newest
    periods = [int(name_time(p) // EVERY) for p in files]
    assert periods == [periods[-1] - 2, periods[-1] - 1, periods[-1]], [p.name for p in files]
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in files)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"

    with Timeline(folder) as t:
        frames = list(t.frames())
        assert len(frames) == t.tick_count == len(Player(t))
        seamless(frames)
        firsts = {rec_path.name: None for rec_path in t.files}
        assert len(firsts) == 3
        assert [e.event.kind for e in t.events(["start", "stop"])] == ["start", "stop"]
        assert followed_ticks[-1] == t.last_tick  # the follower saw every tick
        # --at a time in the middle file: the player starts there
        mid = name_time(files[1]) + 0.6
        p = Player(t, start_t=mid)
        assert abs(p.t - mid) <= INTERVAL
        assert t.tick_at(p.t) == p.tick and t.tick_at(mid) in (p.tick, p.tick - 1)


def test_restart_continues_the_timeline(pg_cluster, tmp_path):
    """A second recorder (a service restarted) adds files; its ticks come after a gap of the time
    between, and the export over both reads as one."""
    folder = tmp_path / "always"
    for _ in range(2):
        proc = rotating(pg_cluster, folder, 2.5)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        time.sleep(1.0)
    with Timeline(folder) as t:
        assert len(t.files) >= 3
        ticks = [f.tick for f in t.frames()]
        assert ticks == sorted(set(ticks))
        gaps = [b - a for a, b in zip(ticks, ticks[1:]) if b - a > 1]
        assert len(gaps) == 1 and gaps[0] * INTERVAL >= 1.0  # the second start: after a second
        assert [e.event.kind for e in t.events(["start", "stop"])] == ["start", "stop"]
    csv = tmp_path / "w.csv"
    assert main(["export", str(folder), "--metrics", "wal.bytes_s", "-o", str(csv)]) == 0
    assert len(csv.read_text().splitlines()) == len(ticks) + 1
    with Timeline(folder) as t:
        times = [f.t for f in t.frames()]
    cut = times[len(times) // 2]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cut))
    assert main(["export", str(folder), "--metrics", "wal.bytes_s", "--from", stamp, "-o", str(csv)]) == 0
    assert len(csv.read_text().splitlines()) - 1 == sum(1 for x in times if x >= int(cut))
    with pytest.raises(CliError, match="--from/--to"):
        windowed_paths([str(folder)], argparse.Namespace(from_t=None, to_t=None), str(tmp_path))
    html = tmp_path / "w.html"
    assert main(["report", str(folder), "--to", stamp, "-o", str(html)]) == 0
    assert html.stat().st_size > 10_000 and "<svg" in html.read_text()


def test_expired_by_age_and_size(tmp_path):
    every = 3600.0
    names = [tmp_path / file_name(1_800_000_000 + i * every) for i in range(5)]
    for i, p in enumerate(names):
        p.write_bytes(b"x" * 1000 * (i + 1))
    now = 1_800_000_000 + 4 * every + 10
    assert expired(names, Rotation(every, keep_s=2 * every), now) == names[:2]  # ended ≤ now - 2 h
    assert expired(names, Rotation(every, keep_bytes=9000), now) == names[:3]  # 4000 + 5000 left
    assert expired(names, Rotation(every, keep_bytes=1), now) == names[:4]  # never the newest
    (tmp_path / "20261399T999999Z.pgio").write_bytes(b"")  # a name of our shape but no time: never ours
    assert rotated_files(tmp_path) == names
    assert parse_size("2GB") == parse_size("2GiB") == parse_size("2g") == 2 * 2 ** 30 and parse_size("512") == 512
    with pytest.raises(ValueError):
        parse_size("2 parsecs")


def test_systemd_unit_matches_the_docs(capsys):
    from pgio_tui.commands.systemd import EXAMPLE, EXAMPLE_PROGRAM, unit
    docs = Path(__file__).resolve().parent.parent / "docs" / "pgio-tui-record.service"
    assert unit(list(EXAMPLE), [EXAMPLE_PROGRAM]) == docs.read_text()
    assert main(["record", "-d", "postgres", "-o", "rec", "--rotate", "1h", "--retain", "7d",
                 "--print-systemd-unit"]) == 0
    out = capsys.readouterr().out
    exec_start = next(line for line in out.splitlines() if line.startswith("ExecStart="))
    assert f"-o {Path('rec').absolute()} --rotate 1h --retain 7d --quiet" in exec_start
    assert "--print-systemd-unit" not in exec_start and f"ReadWritePaths={Path('rec').absolute()}" in out


def synthetic_folder(folder: Path, n: int = 60) -> list[Path]:
    """A folder of rotated files (10 s each) holding the fixture's n synthetic ticks, 0.5 s apart."""
    from fixture_recording import START_T, synthetic_frames

    from pgio_tui.store.rotation import RotatingRecorder
    rec = RotatingRecorder(folder, Rotation(10.0), meta={"interval_s": 0.5}, now=lambda: START_T)
    for f in synthetic_frames(n, interval=0.5, incidents=False):
        rec.write(f)
    rec.close("stopped")
    return rotated_files(folder)


@pytest.mark.asyncio
async def test_the_replay_screen_plays_across_files(tmp_path):
    """The TUI's replay of a folder: one scrubber, the ticks of every file in turn, moments found."""
    from tui_support import wait_for

    from pgio_tui.tui.replay import ReplayApp
    synthetic_folder(tmp_path / "f")
    with Timeline(tmp_path / "f") as t:
        assert len(t.files) >= 3
        assert [f.tick for f in t.frames()] == list(range(60))
        app = ReplayApp(t, speed=64.0, playing=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.player.at_end and app.history.last.tick == 59, timeout=20)
            # the moments come from a worker process: slow on a loaded machine
            await wait_for(pilot, lambda: bool(app.player.moments), timeout=60)
            ticks = app.history.ticks
            assert ticks == list(range(ticks[0], 60))
            assert {m.kind for m in app.player.moments} >= {"checkpoint_start"}


def test_a_damaged_file_is_left_out_with_a_note(tmp_path, capsys):
    """Untrusted files in the folder: one that is not a recording is skipped (said in `note`),
    the others still read as one timeline; a folder of nothing readable is one clear error."""
    from fixture_recording import START_T

    from pgio_tui.store.reader import RecordingError
    files = synthetic_folder(tmp_path / "f")
    inside = name_time(files[1]) + 1
    with Timeline(tmp_path / "f", inside, inside + 1) as t:  # a window opens the files it reaches
        assert t.files == [files[1]]
    files[1].write_bytes(b"not a recording" * 100)
    with Timeline(tmp_path / "f") as t:
        assert files[1].name in (t.note or "") or "not a pgio-tui recording" in (t.note or "")
        assert len(t.files) == len(files) - 1
        ticks = [f.tick for f in t.frames()]
        assert ticks == sorted(set(ticks)) and ticks[0] == 0 and ticks[-1] == 59  # the hole stays a hole
    assert main(["info", str(tmp_path / "f")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:len(files) - 1]] == [files[0].name, *(p.name for p in files[2:])]
    assert out[-2].startswith(f"{len(files) - 1} files") and out[-1].startswith("left out: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / file_name(START_T)).write_bytes(b"junk")
    with pytest.raises(RecordingError, match="no recording with ticks"):
        Timeline(empty)


def test_a_server_restart_across_rotations(make_cluster, tmp_path):
    """The server goes away for longer than a period: the recorder rotates on (OS figures keep
    coming), reconnects, and the folder holds one timeline with the gap, reconnect and restart."""
    import signal

    cluster = make_cluster()
    folder = tmp_path / "always"
    proc = rotating(cluster, folder, 600)
    wait_for_file(folder)
    time.sleep(1.0)
    cluster.stop("immediate")
    time.sleep(EVERY * 2)
    cluster.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Timeline(folder) as t:
            back = t.events(["reconnect"])
            if back and t.last_tick > back[-1].tick + 4:
                break
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with Timeline(folder) as t:
        kinds = {e.event.kind for e in t.events()}
        assert {"gap", "reconnect", "server_restart"} <= kinds, kinds
        assert len(t.files) >= 3
        frames = list(t.frames())
        seamless(frames)  # ticks went on through the outage and the rotations
        away = [f for f in frames if t.events(["gap"])[0].tick <= f.tick < t.events(["reconnect"])[0].tick]
        assert away and all(f.values.get("observer.server_ms") is None for f in away)
        assert away[-1].t - away[0].t >= EVERY  # longer than a period: rotated while the server was away


@pytest.mark.asyncio
async def test_findings_read_the_rotated_files_as_one(make_cluster, tmp_path, capsys):
    """`findings DIR` and replay of a folder of rotated files: the rules read every file of the
    Timeline (pgbench -S over 16MB of shared_buffers, recorded in 2 s files), so the reads finding
    counts the blocks of all of them, as summed here by hand file by file with sqlite3."""
    import json
    import sqlite3

    from pgio_tui.analysis.align import window
    from pgio_tui.analysis.findings import findings_of
    from pgio_tui.analysis.findings_out import with_findings
    from tui_support import wait_for

    from pgio_tui.store.moments import find_moments
    from pgio_tui.tui.replay import ReplayApp
    from pgio_tui.workloads.pg_binaries import find_client

    cluster = make_cluster(shared_buffers="16MB")
    client = str(find_client())
    subprocess.run([client, "-i", "-s", "5", "-q", cluster.conninfo()], check=True, capture_output=True, timeout=120)
    folder = tmp_path / "always"
    proc = rotating(cluster, folder, 7)
    wait_for_file(folder)
    subprocess.run([client, "-S", "-c", "2", "-T", "6", cluster.conninfo()], check=True, capture_output=True,
                   timeout=60)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    files = rotated_files(folder)
    assert len(files) >= 3

    def by_hand(column: str) -> list[float]:  # Σ rate x dt per file, every tick (the window is the whole folder)
        out = []
        for p in files:
            with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as conn:
                scales = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'scales'").fetchone()[0] or "{}")
                (v,) = conn.execute(f'SELECT sum("{column}" * dt) FROM ticks').fetchone()
            out.append((v or 0.0) / scales.get(column, 1))
        return out

    read, hit = by_hand("db.blks_read_s"), by_hand("db.blks_hit_s")
    with Timeline(folder) as t:
        win = window(t, "auto")
        assert (win.start_tick, win.end_tick) == (t.first_tick, t.last_tick)
        (f,) = [x for x in findings_of(t, win) if x.id == "reads_do_not_fit"]
        moments = [m for m in with_findings(find_moments(t), t) if m.kind == "finding"]
    with capsys.disabled():  # shown with -s
        print(f"\nby hand, per file: read {[round(x) for x in read]} hit {[round(x) for x in hit]} | finding: "
              f"{f.figure('blocks read')} {f.figure('blocks hit')}\n{f.text}")
    assert f.figure("blocks read") == round(sum(read)) and f.figure("blocks hit") == round(sum(hit))
    assert sum(x > 0 for x in read) >= 2 and f.figure("blocks read") > max(read)  # more than any one file holds
    assert f.figure("hit ratio") == pytest.approx(100 * sum(hit) / (sum(read) + sum(hit)))
    assert f"reads_do_not_fit: {f.text}" in [m.text for m in moments]  # replay's n/N jumps to it
    capsys.readouterr()
    assert main(["findings", "--format", "json", str(folder)]) == 0
    assert [x for x in json.loads(capsys.readouterr().out) if x["id"] == "reads_do_not_fit"] == [f.to_dict()]
    with Timeline(folder) as t:  # the TUI's replay of the folder: the finding among its moments (n/N)
        app = ReplayApp(t, playing=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: any(m.kind == "finding" for m in app.player.moments), timeout=60)
            assert f"reads_do_not_fit: {f.text}" in [m.text for m in app.player.moments if m.kind == "finding"]


def test_whose_io_over_a_folder_is_the_sum_of_its_files(tmp_path):
    """Timeline.io_bytes (what own_io_shares reads for a rotated folder) sums each file's bytes over
    the part of the range it holds; a range inside one file reads that file alone."""
    from pgio_tui.store.reader import Recording
    files = synthetic_folder(tmp_path / "f")
    with Timeline(tmp_path / "f") as t:
        devices = list(t.devices)
        whole = t.io_bytes(devices)
        parts = []
        for f in files:
            with Recording(f) as r:
                parts.append(r.io_bytes(devices))
        assert len(files) >= 3 and whole is not None and all(parts) and whole.own_read > 0
        assert whole.own_read == pytest.approx(sum(b.own_read for b in parts))
        assert whole.own_written == pytest.approx(sum(b.own_written for b in parts))
        for d in devices:
            for k in (0, 1):
                assert whole.devices[d][k] == pytest.approx(sum(b.devices[d][k] for b in parts)), (d, k)
        first = t.parts[0]
        alone = t.io_bytes(devices, first.first, first.last)
        assert alone is not None and (alone.own_read, alone.own_written) == (parts[0].own_read, parts[0].own_written)
        assert alone.devices == parts[0].devices
