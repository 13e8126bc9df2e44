"""Messages from the feed thread to the UI (posted with the thread-safe `post_message`)."""

from __future__ import annotations

from textual.message import Message

from pgio_tui.frame import Frame
from pgio_tui.tui.feed import FeedStatus, Notice


class FrameArrived(Message):
    """One tick. Never coalesced: every frame goes into the history (and was already recorded)."""

    def __init__(self, frame: Frame, status: FeedStatus):
        super().__init__()
        self.frame = frame
        self.status = status


class FeedNotice(Message):
    """Something the user should read: recording started/saved/failed, sampling stopped."""

    def __init__(self, notice: Notice):
        super().__init__()
        self.notice = notice
