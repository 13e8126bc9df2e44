"""The recording's pg_stat_io rows (`io_rows`): whole counts over the tick, so a counter's sum over the
ticks is the view's delta exactly and a kB figure is never under one block per operation, whatever
the tick's length and however a backend's bursts are spread; files written before them (per-second
rates) read as they were written. The same against a real server: tests/truth/test_io_truth.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from pgio_tui import metrics as M
from pgio_tui.frame import IO_FIELDS, Frame, relation_sums
from pgio_tui.publication import Spreader
from pgio_tui.sampler.postgres_tick import PostgresTick
from pgio_tui.sampler.rates import io_row_rates
from pgio_tui.store import schema
from pgio_tui.store.reader import Recording, RecordingError
from pgio_tui.store.writer import Recorder

FROZEN_RATES = Path(__file__).parent / "data" / "recordings" / "fixture-v3-io-rates.sqlite"

BACKEND = ("client backend", "relation", "normal")  # published in bursts: spread
COMBINED = ("client backend", "relation", "bulkread")  # 18: several blocks a read
CHECKPOINTER = ("checkpointer", "relation", "normal")  # published as written
N = 40


def _dt(tick: int) -> float | None:
    """Tick lengths as a sampler sees them: jitter around 1 s, and one late tick of 3 s."""
    return None if tick == 0 else 3.0 if tick == 25 else 1.0 + ((tick * 7919) % 11 - 5) / 1000


def _cumulative(tick: int) -> list[list]:
    """pg_stat_io rows (IO_FIELDS order, times in ms to the µs, as the view gives them) at a tick: the
    backend publishes every third tick, the checkpointer as it works."""
    pub = tick - tick % 3
    reads, extends = 301 * pub + pub * pub % 7, 17 * pub
    combined = 40 * pub
    cp = 97 * tick + tick % 5
    row = lambda r, w, e, kb, ms: [r, w, w // 2, e, 0, 50 * r, r // 3, 0, kb, 8 * w, 8 * e,  # noqa: E731
                                   ms, round(0.0131 * w, 3), 0.0, round(0.0077 * e, 3), None]
    return [[*BACKEND, *row(reads, 11 * pub, extends, 8 * reads, round(reads * 0.0731, 3))],
            [*COMBINED, *row(combined, 0, 0, 8 * combined + 24 * combined // 2, round(combined * 0.2173, 3))],
            [*CHECKPOINTER, *row(0, cp, 0, 0, 0.0)]]


def _frames() -> list[Frame]:
    """The sampler's Frames over _cumulative, made by its own rate code (PostgresTick._rate: spread or as
    written), the last tick paying out whatever a burst still owes."""
    tick_state = SimpleNamespace(spreader=Spreader(), final=False)
    names: dict = {}
    frames, prev, t = [], None, 1_700_000_000.0
    for tick in range(N):
        dt = _dt(tick)
        t += dt or 0.0
        tick_state.final = tick == N - 1
        rows = _cumulative(tick)
        f = Frame(tick=tick, t=t, elapsed=t - 1_700_000_000.0, dt=dt)
        f.io = io_row_rates(rows, prev, lambda bt, name, c, pc: PostgresTick._rate(
            tick_state, name, c, pc, dt, tick, bt in M.STEADY_PUBLISHERS), names)
        f.sources = relation_sums(f.io)
        frames.append(f)
        prev = rows
    return frames


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("io_rows") / "io.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in _frames():
            rec.write(f)
    return path


def _stored(path: Path) -> dict[tuple, list[tuple]]:
    """io_rows by key, as stored: (tick, dt, *IO_STORED)."""
    with sqlite3.connect(path) as c:
        out: dict[tuple, list[tuple]] = {}
        for bt, obj, ctx, *vals in c.execute(
                f"SELECT k.backend_type, k.object, k.context, r.tick, t.dt, {', '.join(schema.IO_STORED)} "
                "FROM io_rows r JOIN io_keys k ON k.id = r.key_id JOIN ticks t ON t.tick = r.tick ORDER BY r.tick"):
            out.setdefault((bt, obj, ctx), []).append(tuple(vals))
    return out


def test_counts_over_the_ticks_add_up_to_the_views_delta_exactly(recorded):
    stored = _stored(recorded)
    first, last = {tuple(r[:3]): r[3:] for r in _cumulative(0)}, {tuple(r[:3]): r[3:] for r in _cumulative(N - 1)}
    for key in (BACKEND, COMBINED, CHECKPOINTER):
        rows = stored[key]
        assert all(type(v) is int for r in rows for v in r[2:] if v is not None), key  # whole numbers
        sums = [sum(r[2 + i] for r in rows) if rows[0][2 + i] is not None else None for i in range(len(IO_FIELDS))]
        back = schema.io_fields(sums, 1.0)  # the sums as one tick of 1 s: kB with their blocks, ms from µs
        for f, a, b in zip(IO_FIELDS, last[key], first[key]):
            want = None if a is None else a - b
            assert back[f] == (None if want is None else pytest.approx(want, abs=1e-9)), (key, f)
            if f.endswith("_ms") and want is not None:
                assert sums[IO_FIELDS.index(f)] == round(want * 1000), (key, f)  # µs, exactly
    assert sum(1 for r in stored[BACKEND] if r[2]) > N // 2  # a burst every third tick, spread over the ticks


def test_kb_are_never_under_a_block_per_operation(recorded):
    """16-17 (one block an operation): kB beyond blocks exactly 0 at every tick, bursts spread or not;
    18's combined reads: never negative."""
    stored = _stored(recorded)
    beyond = [schema.IO_STORED.index(f"{f}_kb_beyond_blocks_n") for f in ("read", "write", "extend")]
    for key, rows in stored.items():
        for r in rows:
            assert all(r[2 + i] == 0 for i in beyond) if key != COMBINED else all(r[2 + i] >= 0 for i in beyond), \
                (key, r)
    assert sum(r[2 + beyond[0]] for r in stored[COMBINED]) > 0


def test_reader_and_view_give_rates_over_the_stored_dt(recorded):
    with Recording(recorded) as rec:
        read = {(tick, key): row for tick, key, row in rec.io_rows()}
        frames = {f.tick: f for f in rec.frames()}
    with sqlite3.connect(recorded) as c:
        view = {(r[0], tuple(r[1:4])): dict(zip(IO_FIELDS, r[4:])) for r in c.execute("SELECT * FROM io_rows_named")}
    assert view.keys() == read.keys() and len(view) > 2 * N
    for (tick, key), row in read.items():
        assert frames[tick].io[key] == row
        assert view[(tick, key)] == {f: None if v is None else pytest.approx(v, rel=1e-12) for f, v in row.items()}
        dt = round(_dt(tick), 3)
        assert row["reads"] * dt == pytest.approx(round(row["reads"] * dt), abs=1e-9)  # a whole count again
        assert row["read_kb"] >= 8 * row["reads"] - 1e-9


def test_a_tick_of_unknown_length_stores_no_rows(tmp_path):
    f = Frame(tick=0, t=1_700_000_000.0, elapsed=0.0, dt=None)
    f.io = {BACKEND: dict.fromkeys(IO_FIELDS, 5.0)}
    with Recorder(tmp_path / "r.pgio") as rec:
        rec.write(f)
    with sqlite3.connect(tmp_path / "r.pgio") as c:
        assert c.execute("SELECT count(*) FROM io_rows").fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM io_keys").fetchone() == (0,)


def test_file_holding_rates_reads_as_it_was_written(tmp_path):
    """fixture-v3-io-rates.sqlite: io_rows and disk_flush as the per-second rates written before the
    counts (each field quantized on its own: tick 42, 3 s long, reads 205/s and 1637 kB/s). Read as
    written, never changed; facts spelled out here, read with that version's reader."""
    path = tmp_path / "rates.pgio"
    path.write_bytes(FROZEN_RATES.read_bytes())
    before = path.read_bytes()
    with Recording(path) as rec:
        rows = list(rec.io_rows())
        f42 = rec.frame(42)
    assert len(rows) == 259 and len({k for _, k, _ in rows}) == 10
    assert rows[0] == (1, BACKEND, {
        "reads": 1193.0, "writes": 180.0, "writebacks": 10.0, "extends": 43.0, "fsyncs": 0.0, "hits": 103546.0,
        "evictions": 975.0, "reuses": 0.0, "read_kb": 9545.0, "write_kb": 1442.0, "extend_kb": 343.0,
        "read_ms": 64.219, "write_ms": 3.448, "writeback_ms": 0.126, "extend_ms": 0.997, "fsync_ms": 0.0})
    assert f42.dt == 3.0 and f42.io[BACKEND]["reads"] == 205.0 and f42.io[BACKEND]["read_kb"] == 1637.0
    assert f42.io[BACKEND]["read_ms"] == 33.992
    assert f42.sources["client backend"] == {"reads": 205.0, "writes": 50.0, "extends": 14.0, "fsyncs": 0.0,
                                             "writebacks": 3.0, "hits": 34364.0, "evictions": 324.0}
    totals = {f: round(sum(r[f] or 0 for _, _, r in rows), 3) for f in ("reads", "read_kb", "read_ms", "fsync_ms")}
    assert totals == {"reads": 36884.0, "read_kb": 358070.0, "read_ms": 4228.446, "fsync_ms": 44128.624}
    # its disk_flush as rates too (f_s, f_ms_s), read with that version's reader
    assert {d: (r["f_s"], r["f_await_ms"]) for d, r in f42.devices.items()} == {
        "nvme0n1": (14.0, 0.2857142857142857), "nvme1n1": (619.0, 0.33010177705977384), "dm-0": (0.0, 0.0),
        "sda": (0.0, 0.0)}
    with Recording(path) as rec:
        assert round(sum(v for _, _, v in rec.series("disk.nvme1n1.f_await_ms") if v), 6) == 16.409493
        assert sum(v for _, _, v in rec.series("disk.nvme1n1.f_s") if v) == 76074.0
    with sqlite3.connect(path) as c:  # its own views still read it
        assert c.execute("SELECT sum(f_s) FROM disk_flush_named WHERE device = 'nvme1n1'").fetchone() == (76074.0,)
        assert c.execute("SELECT round(sum(reads), 3), round(sum(read_kb), 3), round(sum(read_ms), 3), count(*) "
                         "FROM io_rows_named").fetchone() == (36884.0, 358070.0, 4228.446, 259)
    assert path.read_bytes() == before


def test_io_rows_of_neither_layout_are_refused(tmp_path):
    path = tmp_path / "mixed.pgio"
    path.write_bytes(FROZEN_RATES.read_bytes())
    with sqlite3.connect(path) as c:  # the old table under the new view
        c.execute("DROP VIEW io_rows_named")
        c.executescript(schema._io_rows_ddl(schema.IO_COUNTS).split(";\n")[-1] + ";")
    with pytest.raises(RecordingError) as e:
        Recording(path)
    assert "io_rows_named" in str(e.value) and "\n" not in str(e.value)
