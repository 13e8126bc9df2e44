"""Replay's window decode tests a whole row or fetch of stored numbers at once (validate.all_numbers)
and decodes value by value only what fails: both ways must give the same Frames, on a sound file and
on one whose rows fail the test (text, blobs, infinities, absurd magnitudes in numeric columns)."""

from __future__ import annotations

import math
import shutil
import sqlite3

import pytest

from pgio_tui.store import rebuild
from pgio_tui.store.reader import Recording
from pgio_tui.store.validate import MAX_MAGNITUDE, all_numbers, number

ROWS = [
    [], [None, None], [1.0, 2, None, -3.5], [0.0, -0.0], [MAX_MAGNITUDE, -MAX_MAGNITUDE], [10 ** 18 + 1],
    [1.0, math.nan], [math.nan, 1.0], [None, math.inf], [-math.inf], [1.0, 1e19], [-1e19, None],
    [1.0, "2"], [b"\x00", 1.0], [True, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0] * 20 + [math.nan],
]


@pytest.mark.parametrize("row", ROWS, ids=[repr(r)[:40] for r in ROWS])
def test_all_numbers_says_whether_number_keeps_every_value(row):
    assert all_numbers(row) == all(number(v) is v for v in row)
    assert all_numbers(dict(enumerate(row)).values()) == all_numbers(row)  # a dict's view is read twice


def _frames(path, monkeypatch, fast: bool) -> list:
    """Every Frame of `path`, decoded with the whole-row test (fast) or value by value (the test
    made to fail for every row and fetch, as a damaged file's rows do)."""
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(rebuild, "all_numbers", lambda values: False)
        with Recording(path) as rec:
            return list(rec.frames())


def test_window_decode_is_the_same_either_way(fixture_file, tmp_path, monkeypatch):
    sound = _frames(fixture_file, monkeypatch, fast=True)
    assert sound == _frames(fixture_file, monkeypatch, fast=False)
    assert any(f.io for f in sound) and any(f.devices for f in sound)  # the tables the test covers hold rows

    damaged = shutil.copy(fixture_file, tmp_path / "damaged.pgio")
    with sqlite3.connect(damaged) as c:  # one bad value in each table decoded at once, on a few ticks
        c.execute('UPDATE ticks SET "mem.dirty_kb" = \'lots\', "latency.tps" = 1e30 WHERE tick = 10')
        c.execute('UPDATE ticks SET "checkpoint.kind" = 7.5, "writes.backend" = x\'00\' WHERE tick = 11')
        c.execute("UPDATE disk SET r_s = 9e999 WHERE tick = 12")
        c.execute("UPDATE io_rows SET reads_n = 'x' WHERE tick = 13")
    fast, slow = _frames(damaged, monkeypatch, fast=True), _frames(damaged, monkeypatch, fast=False)
    assert fast == slow
    by_tick = {f.tick: f for f in fast}
    assert "mem.dirty_kb" not in by_tick[10].values and "latency.tps" not in by_tick[10].values
    assert by_tick[11].values["checkpoint.kind"] == "7.5" and "writes.backend" not in by_tick[11].values
    assert by_tick[9] == next(f for f in sound if f.tick == 9)  # sound ticks of a damaged fetch: as before
