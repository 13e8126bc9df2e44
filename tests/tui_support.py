"""Shared pieces of the TUI tests: a duck-typed sampler fed by synthetic frames, a workload stub,
and helpers to read what a LinesView shows."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from fixture_recording import synthetic_frames

from pgio_tui.frame import Frame


class FakeSampler:
    """A pgio_tui.interfaces.SamplerLike fed by synthetic frames.

    Frames come every `interval` seconds of real time (kept short so tests are quick); their own
    timestamps stay the fixture's, so the picture does not depend on the wall clock.
    """

    def __init__(self, n: int = 400, interval: float = 0.05, *, os_mode: str = "local", pgss: bool = True,
                 read_all_stats: bool = True, notes: list[str] | None = None):
        self.interval = interval
        self.os_mode = os_mode
        self._frames = list(synthetic_frames(n, incidents=False))
        self.settings = {"checkpoint_timeout": "300", "checkpoint_completion_target": "0.9"}
        self.device_roles: dict[str, str] = {}
        self.postmaster_start = None
        self.pg = SimpleNamespace(conninfo=None, features=SimpleNamespace(  # no server to launch on
            notes=list(notes or []), read_all_stats=read_all_stats, pgss_schema="public" if pgss else None,
            io_cols=frozenset({"writes"})))
        self.yielded = 0
        self.tick_sources: list = []

    def meta(self) -> dict:
        return {"host": "fake-host", "port": "5432", "dbname": "bench", "server_version": "17.2",
                "interval_s": self.interval, "os_metrics": self.os_mode}

    def settings_rows(self):
        return [(k, v, "", "postgres") for k, v in self.settings.items()]

    def close(self) -> None:  # nothing to let go of
        pass

    def frames(self, stop: threading.Event, duration: float | None = None, first_gap: float | None = None):
        for f in self._frames:
            if stop.wait(self.interval):
                return
            self.yielded += 1
            yield Frame(tick=f.tick, t=f.t, elapsed=f.elapsed, dt=f.dt, values=dict(f.values),
                        devices={k: dict(v) for k, v in f.devices.items()}, device_roles=dict(f.device_roles),
                        sources=dict(f.sources), waits=list(f.waits), events=list(f.events),
                        checkpoints=list(f.checkpoints))


class StubWorkload:
    """A running workload that stops when asked (pgio_tui.interfaces.WorkloadLike)."""

    kind = "pgbench"
    setup_label = ""
    phase = "run"
    progress = None
    error = None

    def __init__(self):
        self.running = True
        self.started_t = 0.0
        self.stopped = threading.Event()
        self.recorders: list = []

    @property
    def done(self) -> bool:
        return not self.running

    @property
    def stop_requested(self) -> bool:
        return self.stopped.is_set()

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False
        self.stopped.set()

    def kill(self) -> None:
        self.stop()

    def wait(self, timeout: float | None = None) -> bool:
        return self.stopped.wait(timeout)

    def output_tail(self, n: int = 20) -> list[str]:
        return ["progress: 5.0 s, 3187.4 tps, lat 2.507 ms stddev 1.102", "progress: 6.0 s, 3201.0 tps"][-n:]

    def on_recorder(self, recorder) -> None:
        self.recorders.append(recorder)

    def sample(self, frame) -> None:
        pass


def text_of(widget) -> str:
    """The text a LinesView currently shows, lines joined with newlines."""
    return "\n".join("".join(t for t, _ in line) for line in widget._lines)


async def wait_for(pilot, predicate, timeout: float = 10.0, step: float = 0.05) -> None:
    """Let the app run until predicate() holds (frames arrive from a thread)."""
    waited = 0.0
    while not predicate():
        if waited >= timeout:
            raise AssertionError("condition not met in time")
        await pilot.pause(step)
        waited += step


def screen_text(app) -> list[str]:
    """What the terminal shows now, line by line (the screen's full update, as text)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]
