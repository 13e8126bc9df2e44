"""Session and its headless driver, without PostgreSQL: a sampler double yielding synthetic frames.

An experiment runs many Sessions in a row in one process, so each one must leave nothing behind
(signal handlers put back) and close its recording with the right stop reason; frame consumers
(the recorder's peers, e.g. a Prometheus exporter) see every frame after it is recorded.
"""

from __future__ import annotations

import os
import signal

import pytest
from tui_support import FakeSampler, StubWorkload

from pgio_tui.errors import CliError
from pgio_tui.headless import run_headless
from pgio_tui.session import Session, end_workload
from pgio_tui.store.reader import Recording


def stop_text(path) -> str:
    with Recording(path) as rec:
        return [e.event.text for e in rec.events(["stop"])][-1]


def ticks_in(path) -> int:
    with Recording(path) as rec:
        return rec.tick_count


def test_sessions_in_a_row_record_everything_and_leave_no_handlers(tmp_path, capsys):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    for run in range(3):
        path = tmp_path / f"run{run}.pgio"
        seen = []
        session = Session(FakeSampler(n=6, interval=0.01), consumers=[seen.append])
        session.record(str(path))
        assert run_headless(session, label=str(path), quiet=True) == "stopped"
        assert [f.tick for f in seen] == list(range(6))  # every frame, in order
        assert ticks_in(path) == 6 and stop_text(path) == "stopped"
        assert f"recorded 6 ticks to {path} (stopped)" in capsys.readouterr().err
        assert {s: signal.getsignal(s) for s in before} == before


def test_a_signal_stops_the_session_and_names_itself_in_the_file(tmp_path):
    path = tmp_path / "sig.pgio"
    session = Session(FakeSampler(n=400, interval=0.01))
    session.consumers.append(lambda f: f.tick == 3 and os.kill(os.getpid(), signal.SIGTERM))
    session.record(str(path))
    assert run_headless(session, label=str(path), quiet=True) == "signal SIGTERM"
    assert 4 <= ticks_in(path) < 400 and stop_text(path) == "signal SIGTERM"


def test_a_failing_consumer_is_dropped_and_the_recording_goes_on(tmp_path):
    path = tmp_path / "c.pgio"
    notices = []

    def broken(frame):
        raise RuntimeError("exporter down")

    session = Session(FakeSampler(n=5, interval=0.01), consumers=[broken],
                      on_notice=lambda t, s: notices.append((t, s)))
    session.record(str(path))
    run_headless(session, label=str(path), quiet=True)
    assert ticks_in(path) == 5 and session.consumers == []
    assert any("exporter down" in text and sev == "warning" for text, sev in notices)


def test_an_existing_file_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "x.pgio"
    path.write_text("precious")
    with pytest.raises(CliError, match="already exists"):
        Session(FakeSampler(n=1)).record(str(path))
    assert path.read_text() == "precious"


def test_requests_from_another_thread_land_on_the_next_tick(tmp_path):
    """What the TUI asks (annotate, start/stop recording) is applied at the next tick, in order."""
    path = tmp_path / "later.pgio"
    session = Session(FakeSampler(n=8, interval=0.01))
    frames = session.frames()
    next(frames)  # tick 0: not recorded
    session.start_recording(str(path))
    session.annotate("raised clients to 64")
    assert next(frames).tick == 1 and session.recording == str(path)
    for _ in range(3):
        next(frames)
    session.stop_recording()
    next(frames)  # tick 5 applies the stop
    assert session.recording is None
    session.stop("done")
    assert list(frames) == [] and session.close() is None  # nothing left open
    with Recording(path) as rec:
        assert rec.tick_count == 4
        assert [e.event.text for e in rec.events(["annotation"])] == ["raised clients to 64"]
        assert [e.tick for e in rec.events(["annotation"])] == [1]
    assert stop_text(path) == "stopped from the live view"


def test_the_workload_is_detached_and_ended():
    sampler = FakeSampler(n=3, interval=0.01)
    w = StubWorkload()
    session = Session(sampler, workload=w)
    assert sampler.tick_sources == [w]
    session.close()
    assert sampler.tick_sources == []
    end_workload(w, grace=1)
    assert not w.running and w.stopped.is_set()
