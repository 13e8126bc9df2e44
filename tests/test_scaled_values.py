"""Schema 3 stores the values kept to decimals (ms gauges, 0-1 fractions, seconds, await, queue size)
as scaled whole numbers to keep an hour under 3 MB (bench/recording_size.py). Nothing may change
for a reader: on a real recording every such figure reads back exactly as quantize() keeps it (the
stored precision, the same as schema 2's plain REALs), and the file rewritten as schema 2 gives
identical Frames and identical export, diff, report and replay output. A frozen schema-2 file
reads back identical after being written again as schema 3."""

from __future__ import annotations

import copy
import io
import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import pytest
from fixture_recording import synthetic_frames

from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.formats import FORMATS, render
from pgio_tui.analysis.report import build
from pgio_tui import metrics as M
from pgio_tui.metrics import lookup
from pgio_tui.session import Session, open_sampler
from pgio_tui.store import schema
from pgio_tui.store.export import export
from pgio_tui.store.moments import find_moments
from pgio_tui.store.player import Player
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder
from pgio_tui.workloads.pgbench import PgbenchWorkload

FROZEN_V2 = Path(__file__).parent / "data" / "recordings" / "fixture-v2.sqlite"
INTERVAL = 0.5


def as_schema_2(src: Path, dst: Path) -> Path:
    """`src` (schema 3) rewritten the way schema 2 stored it: plain REALs (stored / scale, which
    SQLite divides exactly as the reader does), the disk table's old column names and view (taken
    from the frozen schema-2 file, not from pgio-tui's code), no "scales", schema_version 2."""
    shutil.copyfile(src, dst)
    with sqlite3.connect(FROZEN_V2) as old:
        view = old.execute("SELECT sql FROM sqlite_master WHERE name = 'disk_named'").fetchone()[0]
    c = sqlite3.connect(dst)
    scales = dict(c.execute("SELECT key, value FROM meta WHERE key = 'scales'").fetchall())
    for col, scale in json.loads(scales["scales"]).items():
        c.execute(f'UPDATE ticks SET "{col}" = "{col}" / {scale}.0')
    c.execute("DROP VIEW disk_named")
    for new, old_name, scale in (("r_await_us", "r_await_ms", 1000), ("w_await_us", "w_await_ms", 1000),
                                 ("aqu_sz_x100", "aqu_sz", 100)):
        c.execute(f"ALTER TABLE disk RENAME COLUMN {new} TO {old_name}")
        c.execute(f"UPDATE disk SET {old_name} = {old_name} / {scale}.0")
    c.execute(view)
    c.execute("DELETE FROM meta WHERE key = 'scales'")
    c.execute("UPDATE meta SET value = 2 WHERE key = 'schema_version'")
    c.commit()
    c.execute("VACUUM")
    c.close()
    return dst


def objects(path: Path) -> dict:
    with sqlite3.connect(path) as c:
        return {(t, n): (sql if t == "view" else None,
                         [r[1:3] for r in c.execute(f'PRAGMA table_info("{n}")')] if t == "table" else None)
                for t, n, sql in c.execute("SELECT type, name, sql FROM sqlite_master")}


def outputs(path: Path) -> dict[str, str]:
    """What export, diff, report and a replay make of a recording, with its folder taken out."""
    out = {}
    with Recording(path) as rec:
        for fmt in ("csv", "json", "openmetrics"):
            buf = io.StringIO()
            export(rec, buf, fmt=fmt)
            out[f"export {fmt}"] = buf.getvalue()
        player = Player(rec, playing=False)
        player.moments = find_moments(rec)
        shown = []
        while True:
            shown.append(repr(rec.frame(player.tick)))
            if player.at_end:
                break
            player.step(1)
        out["replay"] = "\n".join(shown) + repr(player.moments)
    c = compare(path, path)
    out.update({f"diff {fmt}": render(c, fmt) for fmt in FORMATS})
    out["report"] = build([path])
    return {k: v.replace(str(path.parent), "DIR") for k, v in out.items()}


def fresh_db(cluster) -> str:
    name = f"scaled_{uuid.uuid4().hex[:8]}"
    with cluster.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


def test_real_recording_reads_back_every_figure(pg_cluster, tmp_path):
    db = fresh_db(pg_cluster)
    path = tmp_path / "v3" / "run.pgio"
    path.parent.mkdir()
    written = []
    workload = PgbenchWorkload(pg_cluster.conninfo(db), ["-c", "2", "-T", "3"], init_scale=1)
    sampler = open_sampler(pg_cluster.conninfo(db), interval=INTERVAL)
    try:
        session = Session(sampler, workload=workload, duration=30, record_until_workload_ends=True,
                          consumers=[lambda f: written.append(copy.deepcopy(f))])
        session.record(str(path))
        workload.start()
        for _ in session.frames():
            if session.recording is None:  # closed once pgbench's end is in a frame
                break
        session.close()
    finally:
        workload.stop()
        sampler.close()

    # 1. Every figure schema 3 scales reads back exactly as quantize() keeps it.
    with Recording(path) as rec:
        assert rec.schema_version == schema.SCHEMA_VERSION and rec.meta["scales"]["latency.mean_ms"] == 1000
        back = {f.tick: f for f in rec.frames()}
    scaled = set(schema.tick_scales(schema.catalog_columns()))
    checked = {"ticks": 0, "disk": 0}
    for f in written:
        if f.tick not in back:
            continue  # after the recording closed
        b = back[f.tick]
        want = {k: schema.quantize(v, lookup(k).unit if lookup(k) else None, INTERVAL) for k, v in f.values.items()}
        assert b.values == {k: v for k, v in want.items() if v is not None}, f.tick
        checked["ticks"] += sum(1 for k, v in b.values.items() if k in scaled and v is not None and v != int(v))
        for dev, fields in f.devices.items():
            for fld, unit in zip(schema.DISK_COLUMNS, schema.DISK_UNITS):
                assert b.devices[dev][fld] == (schema.quantize(fields.get(fld), unit, INTERVAL) or 0.0), (f.tick, dev)
                checked["disk"] += fld in ("r_await_ms", "w_await_ms", "aqu_sz") and b.devices[dev][fld] != 0
    assert checked["ticks"] > 20 and checked["disk"] > 5, checked  # fractional values were really there
    with sqlite3.connect(path) as c:  # and are stored as whole numbers
        assert c.execute('SELECT count(*) FROM ticks WHERE "latency.mean_ms" IS NOT NULL').fetchone()[0] > 3
        assert c.execute('SELECT count(*) FROM ticks WHERE "latency.mean_ms" != round("latency.mean_ms") '
                         'OR "observer.collect_ms" != round("observer.collect_ms")').fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM disk WHERE w_await_us != round(w_await_us)").fetchone()[0] == 0

    # 2. The same file as schema 2 stored it: identical Frames and output everywhere.
    (tmp_path / "v2").mkdir()
    old = as_schema_2(path, tmp_path / "v2" / "run.pgio")
    frozen, got = objects(FROZEN_V2), objects(old)
    # disk_flush holds counts over the tick since 2026-11-27 in any schema (both layouts: test_io_rows.py)
    frozen = {k: v for k, v in frozen.items() if k[1] not in ("disk_flush", "disk_flush_named")}
    # a genuine schema-2 layout; `ticks` has a column per catalog metric, and metrics added since
    # fixture-v2 was frozen are more columns (added without a version bump), none changed
    frozen_ticks, got_ticks = dict(frozen.pop(("table", "ticks"))[1]), dict(got[("table", "ticks")][1])
    assert {k: v for k, v in got.items() if k in frozen} == frozen
    assert {c: got_ticks.get(c) for c in frozen_ticks} == frozen_ticks
    with Recording(old) as rec2, Recording(path) as rec3:
        assert rec2.schema_version == 2
        assert list(rec2.frames()) == list(rec3.frames())
        assert rec2.metric_names() == rec3.metric_names()
        assert rec2.latency_histogram().max_ms == rec3.latency_histogram().max_ms is not None
    new_out, old_out = outputs(path), outputs(old)
    for what in new_out:
        assert new_out[what] == old_out[what], what
    # w_await, not r_await: a 3 s pgbench on a small table may read nothing from the device (page cache)
    assert "latency.p99_ms" in new_out["export csv"] and "w_await" in new_out["diff table"]


def test_frozen_schema_2_file_reads_the_same_written_again(tmp_path):
    """fixture-v2 (written by schema 2) read as Frames, written again by this Recorder, reads back
    identical figure for figure; the flushes, now kept as whole counts over the tick, as those counts
    over the tick's dt (fixture-v2 holds its rates rounded to one per second)."""
    with Recording(FROZEN_V2) as rec:
        assert rec.schema_version == 2 and "scales" not in rec.meta
        interval = rec.meta["interval_s"]
        frames = list(rec.frames())
        names = rec.metric_names()
    path = tmp_path / "again.pgio"
    with Recorder(path, meta={"interval_s": interval}) as w:
        for f in frames:
            w.write(f)
    with Recording(path) as rec:
        assert rec.schema_version == 3 and rec.metric_names() == names
        again = list(rec.frames())
    assert len(again) == len(frames)
    flushes = 0
    for a, b in zip(frames, again):
        assert (a.tick, a.t, a.elapsed, a.dt, a.values, a.sources, a.waits, a.checkpoints) == \
               (b.tick, b.t, b.elapsed, b.dt, b.values, b.sources, b.waits, b.checkpoints), a.tick
        assert a.devices.keys() == b.devices.keys(), a.tick
        for dev, row in a.devices.items():
            n, us = round(row["f_s"] * a.dt), round(row["f_s"] * row["f_await_ms"] * a.dt * 1000)
            assert b.devices[dev] == {**row, "f_s": n / a.dt, "f_await_ms": us / 1000 / n if n else 0.0}, a.tick
            flushes += n
        assert (a.statements, a.backends, a.aio, a.latency_buckets) == \
               (b.statements, b.backends, b.aio, b.latency_buckets), a.tick
    assert flushes > 1000  # the file's flushes were really there


def test_crafted_scales_are_ignored(tmp_path):
    """A "scales" entry naming a text column, or a scale that is not one of SCALES, is ignored (the
    value reads as stored): a shared file cannot make a reader divide text or by zero."""
    path = tmp_path / "r.pgio"
    frames = list(synthetic_frames(5, incidents=False))
    with Recorder(path, meta={"interval_s": 1.0}) as w:
        for f in frames:
            w.write(f)
    with sqlite3.connect(path) as c:
        c.execute("""UPDATE meta SET value = '{"checkpoint.kind": 1000, "latency.mean_ms": 0,
                     "observer.collect_ms": 7, "mem.dirty_kb": "x"}' WHERE key = 'scales'""")
        raw = c.execute('SELECT "latency.mean_ms" FROM ticks WHERE tick = 3').fetchone()[0]
    with Recording(path) as rec:
        f = rec.frame(3)
        assert f.values["checkpoint.kind"] == "time" and f.values["latency.mean_ms"] == raw
        assert [v for _, _, v in rec.series("latency.mean_ms")][3] == raw


def test_time_per_second_keeps_its_sub_millisecond_part(tmp_path):
    """ms/s figures are time, not events: 0.4 ms of WAL fsync in a one-second tick is 0.4, not 0
    (before, every .../s unit was kept to one unit per tick and these read back 0)."""
    assert schema.quantize(0.4, "ms/s", 1.0) == 0.4 and schema.quantize(0.4, "1/s", 1.0) == 0.0
    frames = list(synthetic_frames(4, incidents=False))
    timings = (M.WAL_SYNC_TIME_MS_S, M.WAL_WRITE_TIME_MS_S, M.DB_BLK_READ_TIME_MS_S, M.DB_BLK_WRITE_TIME_MS_S)
    for f in frames:
        f.values.update(dict.fromkeys(timings, 0.4))
    path = tmp_path / "r.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as w:
        for f in frames:
            w.write(f)
    with Recording(path) as rec:
        assert all(rec.meta["scales"][name] == 1000 for name in timings)
        for f in rec.frames():
            assert {name: f.values[name] for name in timings} == dict.fromkeys(timings, 0.4), f.tick
        assert [v for _, _, v in rec.series(M.WAL_SYNC_TIME_MS_S)] == [0.4] * len(frames)


@pytest.mark.parametrize("name", ["fixture-v1.sqlite", "fixture-v2.sqlite"])
def test_old_recordings_read_their_timings_as_written(name):
    """Files written before ms/s kept decimals (their meta holds no scale for them) read each
    ms/s value exactly as the file holds it."""
    path = FROZEN_V2.parent / name
    with sqlite3.connect(path) as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(ticks)") if r[1].endswith("_ms_s")]
        raw = {r[0]: dict(zip(cols, r[1:])) for r in
               c.execute(f"SELECT tick, {', '.join(schema.quote(col) for col in cols)} FROM ticks")}
    assert M.DB_BLK_READ_TIME_MS_S in cols and sum(v[M.DB_BLK_READ_TIME_MS_S] or 0 for v in raw.values()) > 0
    with Recording(path) as rec:
        back = {f.tick: {col: f.values.get(col) for col in cols} for f in rec.frames()}
    assert back == raw
