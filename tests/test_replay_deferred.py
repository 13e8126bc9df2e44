"""A seek's window Frames decode their pg_stat_io rows, statements and backends only when something
reads them (store/rebuild.py's DeferredFrame), and FrameHistory keeps them undecoded until a pane
or a screen asks: what is decoded late must be what an eager decode gives, on the fixture, the
stored older layouts and a hostile file (rows that decode to nothing, text and absurd numbers), in
the history (statements_at, backends_at, the window summaries, trimming) and on screen, also where
a view reads all of it (the reads and WAL views, the statements and backends screens)."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import fields
from pathlib import Path

import pytest
from fixture_recording import write_fixture
from tui_support import screen_text

from pgio_tui.frame import Frame
from pgio_tui.store.reader import Recording
from pgio_tui.tui import history as history_module
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.replay import ReplayApp

pytestmark = pytest.mark.usefixtures("utc")

DATA = Path(__file__).parent / "data" / "recordings"
DEFERRED = ("io", "sources", "statements", "statement_texts", "backends", "aio")


def decoded(frame: Frame, name: str) -> bool:
    """Whether the field is set, without decoding it (an unset one is what __getattr__ decodes)."""
    try:
        object.__getattribute__(frame, name)
    except AttributeError:
        return False
    return True


def hostile(path: Path) -> Path:
    """The fixture with rows that decode to nothing or fail the number test: the last ticks with
    statements and with backends hold only rows without their statement or backend."""
    with sqlite3.connect(path) as c:
        last_stmt = c.execute("SELECT max(tick) FROM statement_stats").fetchone()[0]
        last_backend = c.execute("SELECT max(tick) FROM backend_io").fetchone()[0]
        c.execute("UPDATE statement_stats SET statement_id = 9000 + statement_id WHERE tick IN (?, 50)", (last_stmt,))
        c.execute("UPDATE statement_stats SET calls = 'x' WHERE tick = 20")
        c.execute("UPDATE statement_stats SET time_us = 1e300 WHERE tick = 30")
        empty = (last_backend, 20, 30, 50, 60, 80)  # several before the backends kept are first cut
        c.execute("UPDATE backend_io SET backend_id = 90000 + backend_id WHERE tick IN (?, ?, ?, ?, ?, ?)", empty)
        c.execute("DELETE FROM aio WHERE tick IN (?, ?, ?, ?, ?, ?)", empty)
        c.execute("UPDATE aio SET count = -1 WHERE tick = 41")
        c.execute("UPDATE aio SET count = 'x' WHERE tick = 42")
        c.execute("UPDATE backend_io SET read_bytes = x'00', query_age_ms = 'old' WHERE tick = 43")
        c.execute("UPDATE io_rows SET reads_n = 'x' WHERE tick = 13")
        c.execute("UPDATE io_rows SET key_id = 900 + key_id WHERE tick = 14")
        c.execute("UPDATE io_rows SET hits_n = 1e300, read_us_n = -5 WHERE tick = 15")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("deferred")
    out = {"fixture": write_fixture(tmp / "f.pgio", n=120),
           "fixture 18": write_fixture(tmp / "f18.pgio", n=120, major=18),
           "hostile": hostile(write_fixture(tmp / "h.pgio", n=120, major=18))}
    for stored in sorted(DATA.glob("fixture-v*.sqlite")):  # older layouts, as stored
        out[stored.stem] = shutil.copy(stored, tmp / stored.name)
    return out


def field_values(frame: Frame, order: tuple[str, ...]) -> dict:
    """Every field, the deferred ones read in `order` first (a group decodes on its first read)."""
    return {**{name: getattr(frame, name) for name in order}, **{f.name: getattr(frame, f.name) for f in fields(Frame)}}


@pytest.mark.parametrize("name", ["fixture", "fixture 18", "hostile", "fixture-v1", "fixture-v2",
                                  "fixture-v3-io-rates"])
def test_deferred_frames_decode_to_the_eager_ones(files, name):
    with Recording(files[name]) as rec:
        eager, late = list(rec.frames()), list(rec.frames(deferred=True))
    assert [f.tick for f in late] == [f.tick for f in eager] and late
    assert not any(decoded(f, n) for f in late for n in DEFERRED), "nothing decoded before it is read"
    orders = (DEFERRED, tuple(reversed(DEFERRED)), ("statement_texts", "aio", "sources"))
    assert [field_values(f, orders[i % 3]) for i, f in enumerate(late)] == \
        [field_values(f, DEFERRED) for f in eager]
    assert late == eager and eager == late  # Frame equality either way round
    if name == "hostile":  # rows stored that decode to nothing: the history must skip those ticks
        assert any(f.may_hold("statements") and not f.statements for f in late)
        assert any(f.may_hold("backends") and not (f.backends or f.aio) for f in late)
        assert late[-1].may_hold("backends") and not late[-1].backends
    if name in ("fixture 18", "hostile"):
        assert any(f.io for f in late) and any(f.statements for f in late) and any(f.backends for f in late)


def history_reads(h: FrameHistory, ticks: list[float]) -> list:
    """What panes and screens read of a history, in an order that decodes it bit by bit: the
    statements and backends at earlier positions before the newest, summaries over parts."""
    out: list = []
    for at in [*ticks[::-1][::7], ticks[0] - 1, None]:
        out += [h.statements_at(at), h.backends_at(at)]
    for a, b in ((ticks[0], ticks[-1]), (ticks[len(ticks) // 3], ticks[len(ticks) // 2]), (ticks[-5], ticks[-1])):
        out += [h.io_summary(a, b), h.sources_summary(a, b), h.waits_summary(a, b)]
    return out + [getattr(h, k) for k in ("sources", "io", "statements", "statement_texts", "backends", "last",
                                          "t", "ticks", "series", "events", "checkpoints", "spans")]


@pytest.mark.parametrize("read_midway", [True, False])  # False: fed whole, nothing decoded until the end
@pytest.mark.parametrize("capacity", [7200, 50])  # 50: the history is trimmed while it is fed
@pytest.mark.parametrize("name", ["fixture 18", "hostile", "fixture-v3-io-rates"])
def test_a_history_of_deferred_frames_is_the_eager_one(files, name, capacity, read_midway, monkeypatch):
    monkeypatch.setattr(history_module, "BACKEND_TICKS", 10)  # the backends kept are counted and cut
    with Recording(files[name]) as rec:
        eager, late = list(rec.frames()), list(rec.frames(deferred=True))
    h_eager, h_late = FrameHistory(capacity), FrameHistory(capacity)
    h_eager.extend(eager[:70])
    h_late.extend(late[:70])
    assert not any(decoded(f, n) for f in late for n in ("io", "sources", "statements")), "push decodes nothing"
    if read_midway:
        assert history_reads(h_late, h_late.t) == history_reads(h_eager, h_eager.t)
    h_eager.extend(eager[70:])  # fed on after some of it was read
    h_late.extend(late[70:])
    assert history_reads(h_late, h_late.t) == history_reads(h_eager, h_eager.t)
    if len(late) > capacity + 64:
        assert len(h_late) < len(late)  # trimmed
    assert len(h_late.backends) <= 10 + 64


SIZE = (160, 48)


async def screens(path: Path, tick: int) -> tuple[list[list[str]], tuple[int, int]]:
    """The monitor after two seeks, then each view that reads the deferred parts: reads (pg_stat_io
    by source), WAL (its writers), statements, backends; and how many of the window's Frames the
    monitor left undecoded, of how many."""
    out = []
    with Recording(path, lazy=True) as rec:
        app = ReplayApp(rec, playing=False)
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            app.seek_tick(tick)  # forward from the start: the ticks played over pushed
            app.seek_tick(tick - 10)  # back: the window read again (what it shares reused)
            app.request_redraw(now=True)
            await pilot.pause()
            out.append(screen_text(app))
            window = app._window_frames.frames
            untouched = [f for f in window if not any(decoded(f, n) for n in DEFERRED)]
            assert window[-1].tick == tick - 10
            for key in ("R", "W", "S", "B"):
                await pilot.press(key)
                await pilot.pause()
                out.append(screen_text(app))
                await pilot.press("escape")
                await pilot.pause()
            out.append(screen_text(app))
    return out, (len(untouched), len(window))


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["fixture 18", "hostile"])
async def test_replay_shows_what_an_eager_decode_shows(files, name, monkeypatch):
    path = files[name]
    deferred, (untouched, window) = await screens(path, 100)
    # the monitor alone reads none of the deferred parts of the window (what makes a seek cheap)
    assert untouched == window > 60
    eager_frames = Recording.frames
    with monkeypatch.context() as m:  # the same replay with every Frame decoded at once
        m.setattr(Recording, "frames", lambda self, a=None, b=None, *, deferred=False: eager_frames(self, a, b))
        eager, _ = await screens(path, 100)
    assert deferred == eager
    assert any("by source" in line for line in deferred[1]) and any("queryid" in line.lower() or "calls" in
                                                                   line.lower() for line in deferred[3])
