"""The findings' columns are read CHUNK_TICKS rows at a time and, for the rules, kept as FloatColumns
(8 bytes a value), so replay's moments on a week-long file take a bounded part of the memory they
took: the columns, the findings and replay's moments must be what the one-shot read gave."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from fixture_recording import write_fixture

from pgio_tui.analysis import align, findings
from pgio_tui.analysis.align import FloatColumn, Columns, aligned_columns, window
from pgio_tui.analysis.findings_out import with_findings
from pgio_tui.store import moments
from pgio_tui.store.reader import Recording


def one_shot(rec, win, metrics, compact=False) -> Columns:
    """aligned_columns as it was: every row read into memory, then turned into columns."""
    if win.start_tick is None:
        return Columns([], [], {m: [] for m in metrics})
    lo = min(rec.tick_at(win.origin_t - 1e-6), win.start_tick)
    cols = list(zip(*rec.rows(metrics, lo, win.end_tick)))
    ticks, ts = cols[0], cols[1]
    first = 1 if ticks[0] < win.start_tick else 0
    interval = float(rec.meta.get("interval_s") or 1.0)
    dt = [b - a for a, b in zip(ts, ts[1:])]
    dt = dt[first - 1:] if first else [interval] + dt
    x = [t - win.origin_t for t in ts[first:]]
    return Columns(x, dt, {m: list(c[first:]) for m, c in zip(metrics, cols[3:])}, list(ticks[first:]),
                   list(ts[first:]))


def as_lists(c: Columns) -> Columns:
    return Columns(c.x, c.dt, {m: v.tolist() if isinstance(v, FloatColumn) else v for m, v in c.values.items()},
                   c.ticks, c.t)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A recording of 400 ticks, with one tick's values not floats (an int, a text) in two columns."""
    path = write_fixture(tmp_path_factory.mktemp("mem") / "r.pgio", 400)
    damaged = shutil.copy(path, path.with_name("damaged.pgio"))
    with sqlite3.connect(damaged) as c:
        c.execute('UPDATE ticks SET "latency.p99_ms" = \'slow\' WHERE tick = 150')
    return path, damaged


@pytest.mark.parametrize("align_to", ["start", "workload", "checkpoint"])
def test_columns_read_in_chunks_are_the_one_shot_columns(recording, monkeypatch, align_to):
    monkeypatch.setattr(align, "CHUNK_TICKS", 7)  # many chunks, the first tick cut from the first one
    for path in recording:
        with Recording(path) as rec:
            win = window(rec, align_to)
            metrics = rec.metric_names()
            expected = one_shot(rec, win, metrics)
            assert aligned_columns(rec, win, metrics) == expected
            compact = aligned_columns(rec, win, metrics, compact=True)
            assert isinstance(compact.values["mem.dirty_kb"], FloatColumn)
            assert isinstance(compact.values["checkpoint.kind"], list)  # text: a list from the chunk that has one
            assert as_lists(compact) == expected


def test_findings_and_moments_are_the_one_shot_ones(recording, monkeypatch):
    def everything(path):
        with Recording(path) as rec:
            out = [f.to_dict() for a in ("start", "workload", "checkpoint") for f in findings.findings_of(rec, window(rec, a))]
            return out, with_findings(moments.find_moments(rec), rec)

    for path in recording:
        with monkeypatch.context() as m:
            m.setattr(findings, "aligned_columns", one_shot)
            expected = everything(path)
        monkeypatch.setattr(align, "CHUNK_TICKS", 7)
        assert everything(path) == expected
        assert expected[0] and any(m.kind == "finding" for m in expected[1])  # the rules found something
