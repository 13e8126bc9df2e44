"""Declared interfaces between the layers: what the Session and the TUI use of a sampler, of a
launched workload and of a recorder. `pgio_tui.sampler.Sampler` and `pgio_tui.workloads.base.Workload` are the real
ones; tests' doubles (tests/tui_support.py) implement the same surface, so nobody above needs
`getattr(obj, "running", False)`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pgio_tui.frame import Frame

if TYPE_CHECKING:
    from pgio_tui.sources.pgfeatures import Features


class ServerLike(Protocol):
    """The sampler's connection: the conninfo it connected with and the server's features."""

    @property
    def conninfo(self) -> str | None:
        """None: no server a workload could be launched on."""

    @property
    def features(self) -> Features: ...


class SamplerLike(Protocol):
    """An opened sampler (pgio_tui.sampler.Sampler: session.open_sampler() checks that it is one)."""

    interval: float
    os_mode: str  # local | remote | none: where /proc comes from
    device_roles: dict[str, str]  # device -> "data", "wal", "data,wal", ...
    tick_sources: list[Any]  # objects with sample(frame), asked once per tick (a launched workload)

    @property
    def pg(self) -> ServerLike: ...

    @property
    def settings(self) -> dict[str, str]: ...

    @property
    def postmaster_start(self) -> float | None: ...

    def meta(self) -> dict[str, object]: ...

    def settings_rows(self) -> list[tuple[str, str, str, str]]: ...

    def frames(self, stop: threading.Event | None = None, duration: float | None = None,
               first_gap: float | None = None) -> Iterator[Frame]: ...

    def close(self) -> None: ...


class WorkloadLike(Protocol):
    """A launched workload (pgio_tui.workloads.base.Workload): pgbench or pgio."""

    kind: str
    phase: str  # idle, setup, run, stopping, done
    progress: float | None  # 0-1 of the current phase when known
    error: str | None  # one line when it failed
    started_t: float | None

    @property
    def setup_label(self) -> str:
        """Its set-up step on a headless progress bar; "" for "<kind> set-up"."""

    @property
    def running(self) -> bool: ...

    @property
    def done(self) -> bool:
        """Finished, and its stop already went into a frame."""

    @property
    def stop_requested(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> bool: ...

    def output_tail(self, n: int = 20) -> list[str]: ...

    def report_lines(self) -> list[str]:
        """Its own end-of-run report, whole."""

    def exit_line(self) -> str:
        """One line: what it did, how it ended (exit status, 130 = early), what failed inside."""

    def on_recorder(self, recorder: RecorderLike | None) -> None: ...

    def sample(self, frame: Frame) -> None: ...


class RecorderLike(Protocol):
    """Where a Session writes its Frames and a workload its output: pgio_tui.store.writer.Recorder
    (one file) or pgio_tui.store.rotation.RotatingRecorder (one file per period)."""

    @property
    def path(self) -> Path: ...

    def write(self, frame: Frame) -> None: ...

    def close(self, reason: str = "", *, t: float | None = None) -> None: ...

    def workload_start(self, kind: str, argv: list[str], params: dict | None = None, t: float | None = None) -> int: ...

    def workload_output(self, workload_id: int, stream: str, line: str, t: float | None = None) -> None: ...

    def workload_stop(self, workload_id: int, exit_code: int | None, summary: dict | None = None,
                      t: float | None = None) -> None: ...
