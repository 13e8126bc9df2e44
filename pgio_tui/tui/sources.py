"""Where the monitor's Frames come from, and what that source can do.

One app (MonitorApp) draws Frames from a FrameSource: the live feed (pgio_tui.tui.feed.LiveFeed:
a Session on a thread) or a recording (`Recorded`: frames read by the app itself, for replay and
the static view). A source declares its `abilities`; the app's keys, footer, palette and help
follow from them (`MonitorApp.check_action`), so no key has to explain that it does nothing here.

Textual-free: a source talks to the app through the FrameSink protocol below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pgio_tui.frame import Frame
    from pgio_tui.interfaces import SamplerLike, WorkloadLike
    from pgio_tui.tui.feed import FeedStatus, Notice

RECORD = "record"  # start / stop a recording of what is shown (r)
ANNOTATE = "annotate"  # mark a moment: an event in the recording (m)
LAUNCH = "launch"  # launch and stop a workload on the monitored server (w, s)
SEEK = "seek"  # move in time: play, pause, step, jump (replay's timeline)


class FrameSink(Protocol):
    """What a source may call on the app; the first two from any thread."""

    def deliver(self, frame: Frame, status: FeedStatus) -> None: ...

    def tell(self, notice: Notice) -> None: ...

    def run_in_thread(self, work: Callable[[], None], name: str) -> None: ...


class FrameSource(Protocol):
    """A source of Frames for the app."""

    abilities: frozenset[str]

    def attach(self, sink: FrameSink) -> None:
        """Start handing Frames to the app (called once the app is mounted)."""

    def detach(self, reason: str = "quit") -> None:
        """Stop; `reason` goes into a recording's stop event. Safe to call more than once."""

    def ui_painted(self) -> None:
        """The monitor's first paint is on screen (its header and panes, figures or not): a source
        that held its own start-up back for it (the live command's connection) may go ahead."""

    def ui_ready(self) -> None:
        """The first frame is on screen: heavy set-up may go ahead."""


class LiveSource(FrameSource, Protocol):
    """A live server: the abilities RECORD, ANNOTATE and LAUNCH are these methods."""

    sampler: SamplerLike

    @property
    def recording(self) -> str | None: ...

    def start_recording(self, path: str, force: bool = False) -> None: ...

    def stop_recording(self) -> None: ...

    def annotate(self, text: str) -> None: ...

    def attach_workload(self, workload: WorkloadLike) -> None: ...


class Recorded:
    """A recording: the app reads its Frames itself (given up front, or by replay's player), so
    there is nothing to start; it can only be moved in time when `seekable`."""

    def __init__(self, seekable: bool = False):
        self.abilities = frozenset({SEEK}) if seekable else frozenset()

    def attach(self, sink: FrameSink) -> None:
        pass

    def detach(self, reason: str = "quit") -> None:
        pass

    def ui_painted(self) -> None:
        pass

    def ui_ready(self) -> None:
        pass
