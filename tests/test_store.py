"""The recording file: write, read back, survive kills and full disks, refuse what it must.

Real SQLite files in tmp_path, real child processes for the crash cases; no mocks.
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from fixture_recording import DEVICES, START_T, synthetic_frames, write_fixture
from pgio_tui.frame import DEVICE_FIELDS, SOURCE_FIELDS, Event, Frame, relation_sums
from pgio_tui.metrics import IO_UNITS, lookup
from pgio_tui.store import schema
from pgio_tui.store.export import describe, export, select_metrics
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder, RecordingError, RecordingExists, scrub_secrets

ROOT = Path(__file__).resolve().parent.parent
FROZEN_V1 = Path(__file__).parent / "data" / "recordings" / "fixture-v1.sqlite"


@pytest.fixture
def fixture_file(tmp_path) -> Path:
    return write_fixture(tmp_path / "fixture.sqlite")


def one_line(e: BaseException) -> str:
    msg = str(e)
    assert msg and "\n" not in msg, f"not a one-line message: {msg!r}"
    return msg


def stored(frame: Frame) -> dict:
    """What a reader must give back for `frame`: values at their stored precision, idle rows kept."""
    q = lambda v, unit: schema.quantize(v, unit)  # noqa: E731  (fixture interval is 1 s)
    return {
        "values": {k: q(v, lookup(k).unit) for k, v in frame.values.items() if q(v, lookup(k).unit) is not None},
        "devices": {d: _device_stored(row, frame.dt) for d, row in frame.devices.items()},
        # a recording keeps pg_stat_io once, by row (io_rows, whole counts over the tick, read back over the
        # stored dt): the sums by backend type are made from the stored rows
        "sources": relation_sums({k: {f: round(row[f] * frame.dt) / round(frame.dt, 3) for f in SOURCE_FIELDS}
                                  for k, row in frame.io.items()})
        if frame.io else {bt: {f: q(row[f], "1/s") for f in SOURCE_FIELDS} for bt, row in frame.sources.items()},
        "waits": sorted(frame.waits),
        "events": [(e.kind, e.text, e.data) for e in frame.events],
        "checkpoints": frame.checkpoints,
    }


def _device_stored(row: dict, dt: float) -> dict:
    """A device row as stored: DEVICE_FIELDS at their precision, but the flushes kept as whole counts
    over the tick (flushes, µs spent flushing), read back over the stored dt and per flush."""
    out = {f: schema.quantize(row[f], lookup(f"disk.x.{f}").unit) for f in DEVICE_FIELDS}
    flushes, us = round(row["f_s"] * dt), round(row["f_s"] * row["f_await_ms"] * dt * 1000)
    out["f_s"] = flushes / round(dt, 3)
    out["f_await_ms"] = us / 1000 / flushes if flushes else 0.0
    return out


def rebuilt(frame: Frame) -> dict:
    return {
        "values": frame.values, "devices": frame.devices, "sources": frame.sources,
        "waits": sorted(frame.waits), "events": [(e.kind, e.text, e.data) for e in frame.events],
        "checkpoints": frame.checkpoints,
    }


# --- round trip ---------------------------------------------------------------------------------

def test_roundtrip_every_kind_of_content(fixture_file):
    originals = list(synthetic_frames())
    with Recording(fixture_file) as rec:
        assert rec.tick_count == len(originals) == 58
        assert (rec.first_tick, rec.last_tick) == (0, 59)
        assert rec.devices == {"nvme0n1": "data", "nvme1n1": "wal", "dm-0": "tblspc", "sda": None}
        back = list(rec.frames())
        assert [f.tick for f in back] == [f.tick for f in originals]
        for orig, got in zip(originals, back):
            assert got.t == pytest.approx(orig.t, abs=5e-4)
            assert got.elapsed == pytest.approx(orig.elapsed, abs=5e-4)
            assert got.dt == (None if orig.dt is None else pytest.approx(orig.dt, abs=5e-4))
            assert got.device_roles == {d: r for d, r in DEVICES.items() if r}
            want = stored(orig)
            if orig.tick == 0:
                want["events"].insert(0, ("start", "recording started", {}))
            if orig.tick == 59:
                want["events"].append(("stop", "fixture done", {}))
            assert rebuilt(got) == want, f"tick {orig.tick}"
        # single-frame access gives the same as the batched one
        assert rebuilt(rec.frame(35)) == rebuilt(back[[f.tick for f in back].index(35)])
        with pytest.raises(KeyError):
            rec.frame(40)  # in the gap


def test_values_none_and_unknown_metrics(tmp_path):
    path = tmp_path / "r.sqlite"
    with Recorder(path, meta={"interval_s": 1}) as w:
        w.write(Frame(0, START_T, 0.0, None, values={"mem.dirty_kb": None, "custom.label": "x"}))
        w.write(Frame(1, START_T + 1, 1.0, 1.0, values={"mem.dirty_kb": 12.0, "custom.ratio": 0.123456789}))
    with Recording(path) as rec:
        assert rec.frame(0).values == {"custom.label": "x"}
        assert rec.frame(1).values == {"mem.dirty_kb": 12.0, "custom.ratio": 0.123456789}  # unknown: kept as is
        assert rec.metric_names() == ["mem.dirty_kb", "custom.label", "custom.ratio"]
        assert rec.db.conn.execute('SELECT "mem.dirty_kb" FROM ticks WHERE tick = 0').fetchone() == (None,)
        types = {c.name: c.type for c in rec.db["ticks"].columns}
        assert types["custom.label"] == "TEXT" and types["custom.ratio"] == "REAL"


def test_settings_meta_workloads(fixture_file):
    with Recording(fixture_file) as rec:
        assert rec.meta["schema_version"] == schema.SCHEMA_VERSION
        assert rec.meta["server_version_num"] == 170002
        assert rec.meta["features"] == {"pg_stat_io": True, "pg_stat_checkpointer": True,
                                        "pg_stat_statements": False}
        assert rec.settings(0)["backend_flush_after"].value == "0"
        assert rec.settings(20)["backend_flush_after"].value == "256"
        assert rec.settings()["backend_flush_after"].tick == 20
        assert rec.settings()["cpu.count"].category == "kernel"
        (w,) = rec.workloads()
        assert w["kind"] == "pgbench" and w["argv"][:3] == ["pgbench", "-c", "8"] and w["exit_code"] == 0
        assert w["summary"] == {"tps": 3187.4}
        out = rec.workload_output(w["id"])
        assert len(out) == 6 and out[0][1] == "stderr" and out[0][2].startswith("progress: 5.0 s")
        assert [c["end_tick"] for c in rec.checkpoints()] == [24, 54]
        assert rec.checkpoints()[0]["wal_files_recycled"] == 3  # an unknown key, kept in `extra`
        kinds = [e.event.kind for e in rec.events(["checkpoint_start", "checkpoint_end"])]
        assert kinds == ["checkpoint_start", "checkpoint_end"] * 2


def test_frozen_v1_file_still_reads_the_same():
    """tests/data/recordings/fixture-v1.sqlite was written by schema 1 (write_fixture()); every later
    reader must read it. Facts are spelled out here, so changing the generator cannot hide a break."""
    with Recording(FROZEN_V1) as rec:
        assert rec.schema_version == 1
        assert (rec.tick_count, rec.first_tick, rec.last_tick) == (58, 0, 59)
        assert rec.start_t == pytest.approx(START_T, abs=0.01)
        assert rec.devices == {"nvme0n1": "data", "nvme1n1": "wal", "dm-0": "tblspc", "sda": None}
        frames = list(rec.frames())
        assert len(frames) == 58 and all(len(f.values) >= 45 for f in frames)
        f = rec.frame(10)
        assert f.values["mem.dirty_background_threshold_kb"] == 1_572_864
        assert f.values["checkpoint.kind"] == "time" and f.values["checkpoint.active"] == 1
        assert set(f.devices) == set(rec.devices) and len(f.sources) == 8
        assert [c["end_tick"] for c in rec.checkpoints()] == [24, 54]
        assert rec.settings(20)["backend_flush_after"].value == "256"
        assert len(rec.events(["gap"])) == 1 and rec.workloads()[0]["kind"] == "pgbench"
        assert len(rec.metric_names()) == 53 + 4 * 8


# --- refusing what it must ----------------------------------------------------------------------

def test_existing_file_refused_unless_force(tmp_path, fixture_file):
    with pytest.raises(RecordingExists) as e:
        Recorder(fixture_file)
    assert "--force" in one_line(e.value)
    Recorder(fixture_file, force=True).close()
    with Recording(fixture_file) as rec:
        assert rec.tick_count == 0 and rec.meta.get("host") != "fixture-host"


@pytest.mark.parametrize("where", ["missing_dir", "under_a_file", "a_directory"])
def test_unwritable_path(tmp_path, where):
    (tmp_path / "file").write_text("x")
    path = {"missing_dir": tmp_path / "nope" / "r.sqlite", "under_a_file": tmp_path / "file" / "r.sqlite",
            "a_directory": tmp_path}[where]
    with pytest.raises(RecordingError) as e:
        Recorder(path)
    assert str(path) in one_line(e.value)


def test_newer_schema_rejected(fixture_file):
    with sqlite3.connect(fixture_file) as c:
        c.execute("UPDATE meta SET value = 99 WHERE key = 'schema_version'")
    with pytest.raises(RecordingError) as e:
        Recording(fixture_file)
    msg = one_line(e.value)
    assert "newer pgio-tui (schema 99" in msg and "upgrade pgio-tui" in msg


def test_older_schema_migrated_in_memory(tmp_path):
    """A schema-1 file gains the statement tables in memory (empty), reads as before, and is
    never written."""
    path = tmp_path / "v1.sqlite"
    path.write_bytes(FROZEN_V1.read_bytes())
    before = path.read_bytes()
    with Recording(path) as rec:
        assert rec.schema_version == 1 and rec.meta["schema_version"] == schema.SCHEMA_VERSION
        assert "statements.window_s" in {c.name for c in rec.db["ticks"].columns}
        assert rec.tick_count == 58 and rec.frame(30).values and rec.frame(30).statements == []
        assert rec.statement_totals() == {} and rec.statement_texts() == {}
    assert path.read_bytes() == before  # never written


@pytest.mark.parametrize("content, expect", [
    (random.Random(7).randbytes(4096), "not an SQLite file"),
    (b"tick,t\n1,2\n" * 50, "not an SQLite file"),
    (b"", "not a pgio-tui recording"),
], ids=["random-bytes", "csv", "empty"])
def test_garbage_rejected(tmp_path, content, expect):
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(content)
    with pytest.raises(RecordingError) as e:
        Recording(path)
    assert expect in one_line(e.value)


def test_other_sqlite_file_rejected(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE meta (key, value)")
        c.execute("CREATE TABLE ticks (x)")
    with pytest.raises(RecordingError) as e:
        Recording(path)
    assert "SQLite file but not a pgio-tui recording" in one_line(e.value)
    with pytest.raises(RecordingError) as e:
        Recording(tmp_path / "missing.sqlite")
    assert "no such file" in one_line(e.value)


# --- live files ---------------------------------------------------------------------------------

def test_reading_while_writing(tmp_path):
    path = tmp_path / "live.sqlite"
    frames = list(synthetic_frames(20, incidents=False))
    w = Recorder(path, meta={"interval_s": 1.0})  # interval >= 1 s: every frame is committed
    for f in frames[:5]:
        w.write(f)
    rec = Recording(path)
    assert rec.tick_count == 5 and rec.last_tick == 4
    for f in frames[5:12]:
        w.write(f)
    extra = frames[12]
    extra.devices["sdz"] = dict.fromkeys(DEVICE_FIELDS, 1.0)
    extra.values["late.column"] = 7.0
    w.write(extra)
    assert rec.refresh() == 8
    assert rec.tick_count == 13 and rec.last_tick == 12
    assert rec.end_t == pytest.approx(frames[12].t, abs=1e-3)
    assert "sdz" in rec.devices and "disk.sdz.r_s" in rec.metric_names()
    assert rec.frame(12).values["late.column"] == 7.0
    assert [t for t, _, v in rec.series("disk.sdz.r_s")][-1] == 12
    w.close("done")  # with a reader still attached: must not fail
    assert rec.refresh() == 0
    assert rec.events(["stop"])[0].event.text == "done"
    rec.close()
    with Recording(path) as again:
        assert again.tick_count == 13


def test_commit_cadence_at_high_rate(tmp_path):
    """Below 1 s per tick, rows wait in memory at most about a second before they are committed."""
    path = tmp_path / "fast.sqlite"
    w = Recorder(path, meta={"interval_s": 0.1})
    rec = Recording(path)
    frames = synthetic_frames(100, interval=0.1, incidents=False)
    w.write(next(frames))
    assert rec.refresh() == 0  # buffered
    t_end = time.monotonic() + 1.2
    while time.monotonic() < t_end:
        w.write(next(frames))
        time.sleep(0.1)
    assert rec.refresh() >= 1
    w.flush()
    assert rec.tick_count == rec.last_tick + 1
    w.close()
    with pytest.raises(RecordingError):
        w.write(next(frames))
    w.close()  # idempotent
    rec.close()


KILL_CHILD = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [{root!r}, {tests!r}]
    from fixture_recording import synthetic_frames
    from pgio_tui.store.writer import Recorder
    rec = Recorder({path!r}, meta={{"interval_s": 0.1}})
    t0 = time.monotonic()
    for i, f in enumerate(synthetic_frames(10_000, interval=0.1, incidents=False)):
        rec.write(f)
        print(f.tick, flush=True)
        time.sleep(max(0.0, t0 + (i + 1) * 0.1 - time.monotonic()))
""")


def _spawn(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)


def test_sigkill_loses_at_most_the_last_second(tmp_path):
    path = tmp_path / "killed.sqlite"
    child = _spawn(KILL_CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), path=str(path)))
    seen: list[tuple[float, int]] = []  # (when the parent read it, tick)

    def read():
        for line in child.stdout:
            seen.append((time.monotonic(), int(line)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while not seen and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.01)
    assert seen, child.stderr.read()
    time.sleep(3.0)
    killed_at = time.monotonic()
    child.send_signal(signal.SIGKILL)
    child.wait()
    reader.join(5)
    must_have = {tick for when, tick in seen if when <= killed_at - 1.0}
    assert len(must_have) >= 15
    with Recording(path) as rec:
        have = {f.tick for f in rec.frames()}
    assert must_have <= have, f"lost {sorted(must_have - have)}"
    assert have <= {tick for _, tick in seen}


DISK_FULL_CHILD = textwrap.dedent("""
    import resource, signal, sys
    sys.path[:0] = [{root!r}, {tests!r}]
    from fixture_recording import synthetic_frames
    from pgio_tui.store.writer import Recorder, RecordingError
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (500_000, resource.RLIM_INFINITY))
    rec = Recorder({path!r}, meta={{"interval_s": 1.0}})
    try:
        for f in synthetic_frames(100_000, incidents=False):
            rec.write(f)  # interval 1 s: committed when write() returns
            print("ok", f.tick, flush=True)
    except RecordingError as e:
        print("error", e, flush=True)
    rec.close()
    print("closed", flush=True)
""")


def _check_full_disk_outcome(path: Path, committed: list[int], error: str) -> None:
    assert "cannot write recording" in error and "\n" not in error
    assert len(committed) > 5
    with Recording(path) as rec:
        assert rec.tick_count >= len(committed)
        have = {f.tick for f in rec.frames(end_tick=committed[-1])}
        assert set(committed) <= have


def test_disk_full_rlimit(tmp_path):
    path = tmp_path / "full.sqlite"
    child = _spawn(DISK_FULL_CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), path=str(path)))
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    lines = out.splitlines()
    assert lines[-1] == "closed" and lines[-2].startswith("error "), out[-500:]
    committed = [int(x.split()[1]) for x in lines if x.startswith("ok ")]
    _check_full_disk_outcome(path, committed, lines[-2][len("error "):])


def test_disk_full_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        path = mnt / "full.sqlite"
        rec = Recorder(path, meta={"interval_s": 1.0})
        committed, error = [], ""
        try:
            for f in synthetic_frames(100_000, incidents=False):
                rec.write(f)
                committed.append(f.tick)
        except RecordingError as e:
            error = str(e)
        rec.close()
        _check_full_disk_outcome(path, committed, error)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


# --- secrets ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    # a connection string or URI: libpq parses it, the rest is rebuilt by make_conninfo
    ("host=db password=s3cret user=me", "user=me host=db"),
    ("host=db password = 's3 \\' cret' user=me", "user=me host=db"),
    ("host=/tmp/s password=ZzA\\ ZzB\\ ZzC user=me", "user=me host=/tmp/s"),  # backslash-escaped blanks
    ("sslpassword=s3cret sslmode=require", "sslmode=require"),
    ("postgresql://me:s3cret@db:5432/app", "user=me dbname=app host=db port=5432"),
    ("postgres://me:s3cret@db/app?sslmode=require&password=s3cret", "user=me dbname=app host=db sslmode=require"),
    ("postgresql://db/app?password=s3cret&sslmode=require", "dbname=app host=db sslmode=require"),
    ("postgresql://me:s3%20cr%40t@db/app", "user=me dbname=app host=db"),  # percent-encoded
    ("host=db user=me", "host=db user=me"),  # no password: unchanged
    ("postgresql://me@db/app", "postgresql://me@db/app"),
    # free text quoting one
    ("PASSWORD=s3cret", ""),
    ("PGPASSWORD=s3cret pgbench -c 8", "pgbench -c 8"),
    ("could not connect: host=db password=ZzA\\ ZzB\\ ZzC user=me", "could not connect: host=db user=me"),
    ("failed: host=db password='a b\\'c' user=me", "failed: host=db user=me"),
    ("connection to postgresql://me:s3cret@db/app failed", "connection to postgresql://me@db/app failed"),
])
def test_scrub_secrets(text, want):
    assert scrub_secrets(text) == want


def test_no_secret_reaches_the_file(tmp_path):
    path = tmp_path / "secret.sqlite"
    meta = {
        "conninfo": "host=db port=5432 password=s3cret user=me",
        "uri": "postgresql://me:s3cret@db/app",
        "command_line": "pgio-tui record -d 'postgresql://me:s3cret@db/app?password=s3cret' -o x",
        "env": {"PGPASSWORD": "s3cret", "PGHOST": "db"},
    }
    w = Recorder(path, meta=meta)
    w.set_meta(server_conninfo="dbname=app password=s3cret")
    w.set_settings([("primary_conninfo", "host=up password=s3cret", None, "postgres")])
    f = next(synthetic_frames(1))
    f.events.append(Event("reconnect", "reconnected to host=db password=s3cret", {"dsn": "password=s3cret"}))
    w.write(f)
    wid = w.workload_start("pgbench", ["pgbench", "postgresql://me:s3cret@db/app"])
    w.workload_output(wid, "stderr", "connection to postgresql://me:s3cret@db failed")
    w.workload_stop(wid, 1)
    w.close("done password=s3cret")
    files = [p for p in tmp_path.iterdir() if p.name.startswith("secret.sqlite")]
    for p in files:
        assert b"s3cret" not in p.read_bytes(), p
    with Recording(path) as rec:
        assert rec.meta["conninfo"] == "user=me host=db port=5432"
        assert rec.meta["env"] == {"PGHOST": "db"}


# --- export, seek, series, info -----------------------------------------------------------------

def test_export_csv_with_globs(fixture_file):
    with Recording(fixture_file) as rec:
        out = io.StringIO()
        n = export(rec, out, "csv", ["mem.*", "disk.*.util_pct"])
        lines = out.getvalue().splitlines()
        assert n == rec.tick_count == len(lines) - 1
        header = lines[0].split(",")
        assert header[:3] == ["tick", "t", "elapsed"]
        assert header[3:9] == ["mem.dirty_kb", "mem.writeback_kb", "mem.dirty_background_threshold_kb",
                               "mem.dirty_threshold_kb", "mem.available_kb", "mem.cached_kb"]
        assert header[9:] == [f"disk.{d}.util_pct" for d in rec.devices]
        first, second = lines[1].split(","), lines[2].split(",")
        assert first[0] == "0" and first[9:] == ["", "", "", ""]  # no device figures on the first tick
        assert second[3] == str(int(rec.frame(1).values["mem.dirty_kb"]))  # whole numbers without ".0"


def test_export_json_lines_and_all_metrics(fixture_file):
    with Recording(fixture_file) as rec:
        out = io.StringIO()
        assert export(rec, out, "json", start_tick=50, end_tick=55) == 6
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        assert [r["tick"] for r in rows] == [50, 51, 52, 53, 54, 55]
        assert list(rows[0]) == ["tick", "t", "elapsed", *rec.metric_names()]
        assert rows[0]["checkpoint.kind"] == "time"
        assert rows[0]["disk.sda.util_pct"] == rec.frame(50).devices["sda"]["util_pct"]


def test_export_glob_matching_nothing(fixture_file):
    with Recording(fixture_file) as rec:
        with pytest.raises(ValueError) as e:
            select_metrics(rec, ["mem.*", "nosuch.*"])
        msg = one_line(e.value)
        assert "'nosuch.*'" in msg and "checkpoint.active" in msg
        with pytest.raises(ValueError):
            export(rec, io.StringIO(), "xml")


def test_tick_at_seeks(fixture_file):
    with Recording(fixture_file) as rec:
        t = {f.tick: f.t for f in rec.frames()}
        assert rec.tick_at(t[30]) == 30
        assert rec.tick_at(t[30] + 0.5) == 30
        assert rec.tick_at(t[30] - 0.01) == 29
        assert rec.tick_at(START_T - 100) == 0
        assert rec.tick_at(START_T + 10_000) == 59
        assert rec.tick_at(START_T + 40.5) == 39  # inside the gap: the tick before it
        ticks = sorted(t)
        for i, tick in enumerate(ticks):  # every tick, and just before each (the one before it: gaps too)
            assert rec.tick_at(t[tick]) == tick and rec.tick_at(t[tick] - 1e-3) == ticks[max(0, i - 1)]


def test_series(fixture_file):
    with Recording(fixture_file) as rec:
        s = rec.series("writes.backend", 10, 20)
        assert [tick for tick, _, _ in s] == list(range(10, 21))
        assert all(v == rec.frame(tick).values["writes.backend"] for tick, _, v in s)
        d = rec.series("disk.nvme1n1.r_await_ms")
        assert len(d) == rec.tick_count and d[0][2] is None  # tick 0: no figures yet
        assert [v for _, _, v in d[1:]] == [rec.frame(tick).devices["nvme1n1"]["r_await_ms"] for tick, _, _ in d[1:]]
        with pytest.raises(KeyError):
            rec.series("disk.nosuch.r_s")
        with pytest.raises(KeyError):
            rec.series("nosuch.metric")


def test_idle_rows_not_stored_but_read_back_as_zeros(tmp_path):
    path = tmp_path / "idle.sqlite"
    idle = dict.fromkeys(DEVICE_FIELDS, 0.0)
    with Recorder(path, meta={"interval_s": 1}) as w:
        for tick in range(3):
            w.write(Frame(tick, START_T + tick, tick, 1.0, devices={"sda": dict(idle, r_s=float(tick == 1))},
                          sources={"walwriter": dict.fromkeys(SOURCE_FIELDS, 0.0)}))
    with Recording(path) as rec:
        assert rec.db.conn.execute("SELECT count(*) FROM disk").fetchone() == (1,)
        assert rec.db.conn.execute("SELECT count(*) FROM io").fetchone() == (0,)
        f = rec.frame(2)
        assert f.devices == {"sda": idle} and f.sources == {"walwriter": dict.fromkeys(SOURCE_FIELDS, 0.0)}
        assert [v for _, _, v in rec.series("disk.sda.r_s")] == [0.0, 1.0, 0.0]


def test_describe(fixture_file):
    with Recording(fixture_file) as rec:
        text = describe(rec)
    for expected in [
        f"file         {fixture_file}", f"schema       {schema.SCHEMA_VERSION} (recorded by pgio-tui", "host         fixture-host",
        "server       PostgreSQL 17.2 (170002)", "interval     1 s",
        "start        2023-11-14T23:13:20+01:00", "(duration 0:00:59)",
        "ticks        58 (0..59), 2 missed in 1 gap(s), 1 late", "checkpoints  2: time 2",
        "devices      nvme0n1 (data), nvme1n1 (wal), dm-0 (tblspc), sda",
        "workload     pgbench: pgbench -c 8 -T 60 bench  (0:00:59, exit 0)",
    ]:
        assert expected in text, f"{expected!r} not in:\n{text}"
    assert "checkpoint_start 2" in text and "gap 1" in text


def test_plain_sql_views(fixture_file):
    """People open the file with sqlite3: the *_named views give names instead of ids."""
    with sqlite3.connect(fixture_file) as c:
        (n,) = c.execute("SELECT count(*) FROM disk_named WHERE device = 'nvme0n1' AND role = 'data'").fetchone()
        assert n == 57
        # pg_stat_io by row (io_rows_named; io_named holds files written before it)
        (w,) = c.execute("SELECT sum(writes) FROM io_rows_named WHERE backend_type = 'checkpointer'").fetchone()
        assert w > 0
        (kb, n) = c.execute("SELECT sum(read_kb), sum(reads) FROM io_rows_named WHERE context = 'bulkread'").fetchone()
        assert kb >= 8 * n > 0  # 18 combines a scan's reads: kB given back from those beyond one block a read
        rows = c.execute("SELECT DISTINCT wait_event FROM waits_named WHERE wait_event_type = 'IO'").fetchall()
        assert {r[0] for r in rows} == {"DataFileRead", "WALSync", "DataFileWrite"}


def test_empty_recording_and_bad_tick_order(tmp_path):
    path = tmp_path / "empty.sqlite"
    w = Recorder(path, meta={"interval_s": 1})
    with Recording(path) as rec:
        assert (rec.tick_count, rec.first_tick, rec.duration) == (0, None, 0.0)
        assert list(rec.frames()) == [] and rec.metric_names() == [] and rec.series("mem.dirty_kb") == []
        assert "ticks        none" in describe(rec)
        out = io.StringIO()
        assert export(rec, out) == 0 and out.getvalue() == "tick,t,elapsed\n"
        with pytest.raises(RecordingError):
            rec.tick_at(START_T)
    w.write(Frame(5, START_T, 0.0, None))
    with pytest.raises(ValueError):
        w.write(Frame(5, START_T + 1, 1.0, 1.0))
    w.close()


def test_created_in_one_thread_written_from_another(tmp_path):
    """The record command creates the Recorder (errors early), the sampler thread writes, the main
    thread closes it on a signal."""
    path = tmp_path / "threads.sqlite"
    w = Recorder(path, meta={"interval_s": 1})
    sampler = threading.Thread(target=lambda: [w.write(f) for f in synthetic_frames(10, incidents=False)])
    sampler.start()
    sampler.join()
    w.close("SIGTERM")
    with Recording(path) as rec:
        assert rec.tick_count == 10 and rec.events(["stop"])[0].event.text == "SIGTERM"


def test_damaged_recording_is_one_line(fixture_file, tmp_path):
    """A recording with a table gone (damage, or a pre-release build) is an error, not a traceback."""
    path = tmp_path / "damaged.pgio"
    path.write_bytes(fixture_file.read_bytes())
    with sqlite3.connect(path) as c:
        c.execute("DROP TABLE sources")
    with pytest.raises(RecordingError) as e:
        Recording(path)
    assert "cannot be read as a pgio-tui recording" in one_line(e.value)


@pytest.mark.parametrize("dsn", [
    "host=/tmp/none port=1 user=me password=ZzA\\ ZzB\\ ZzC",
    "host=/tmp/none port=1 user=me password='ZzA ZzB\\'ZzC'",
    "postgresql://me:ZzA%20ZzB%20ZzC@/app?host=/tmp/none&port=1",
    "postgresql:///app?host=/tmp/none&port=1&password=ZzA%20ZzB%20ZzC",
])
def test_cli_password_forms_never_stored(dsn, monkeypatch):
    """-d DSN as the user types it: the stored command line and conninfo hold no part of it."""
    import sys

    from pgio_tui.secrets import command_line
    from pgio_tui.sources.postgres import conninfo_from_args
    from pgio_tui.store.writer import _plain

    monkeypatch.setattr(sys, "argv", ["pgio-tui", "record", "-d", dsn, "-o", "x.pgio"])
    stored = [_plain(command_line()), _plain(conninfo_from_args(None, None, None, dsn))]
    for text in stored:
        for part in ("ZzA", "ZzB", "ZzC"):
            assert part not in text, text
    assert "record -d" in stored[0] and "x.pgio" in stored[0]


def test_pgpassword_is_not_recorded(monkeypatch):
    from pgio_tui.secrets import scrub_secrets
    monkeypatch.setenv("PGPASSWORD", "Pw-from-env")
    assert scrub_secrets("server said: password Pw-from-env is wrong") == "server said: password ******** is wrong"
