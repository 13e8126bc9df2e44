"""A pane drawn tick after tick from what it kept (chart columns and rasters, rows handed back
unchanged, window sums, the shared time axis) shows exactly what the same pane draws from scratch:
a new pane on a history filled anew with the same frames. Over a long run with gaps, a spike that
rescales the charts and then leaves the window, zooms, a pause, resizes and the history's trimming."""

from __future__ import annotations

from fixture_recording import synthetic_frames

from pgio_tui import metrics as M
from pgio_tui.tui import plot
from pgio_tui.tui.history import FrameHistory
from pgio_tui.tui.screens.monitor import PANES
from pgio_tui.tui.session import SessionInfo
from pgio_tui.tui.widgets.pane import View

SESSION = SessionInfo(host="h", dbname="d", server_version="17.2", settings={"checkpoint_timeout": "300"})
CAPACITY = 240  # under the 5-minute window: the history trims its front during the run
SPIKE_AT, SPIKED = 120, (M.WRITES_BACKEND, M.MEM_DIRTY_KB, M.LATENCY_P99_MS, M.disk("nvme0n1", M.DISK_W_AWAIT_MS))


def _frames(n: int) -> list:
    frames = list(synthetic_frames(n, incidents=True))
    for f in frames:
        if f.tick == SPIKE_AT:  # up the scale for 5 minutes, then back down when it leaves the window
            for metric in SPIKED:
                if metric in f.values:
                    f.values[metric] *= 40
            for dev in f.devices.values():
                dev[M.DISK_W_AWAIT_MS] = 900.0
    return frames


def _plan(n: int) -> list[tuple[int, float | None, tuple[int, int]]]:
    """Per tick: the window (s), a frozen end or None (live), the pane's size."""
    plan = []
    for k in range(n):
        window = 60 if 300 <= k < 340 else (120 if 340 <= k < 360 else 300)
        size = (40, 9) if 200 <= k < 230 else ((90, 14) if 230 <= k < 240 else (57, 11))
        plan.append((window, "pause" if 260 <= k < 275 else None, size))
    return plan


def _lines(pane, view: View, width: int, height: int) -> list:
    """What Pane.draw hands its view: the sections' lines, cut to the height."""
    return [line for _name, part in pane.sections(view, width, height) for line in part][:height]


def test_kept_drawing_equals_a_drawing_from_scratch_every_tick():
    n = 420
    frames = _frames(n)
    history = FrameHistory(capacity=CAPACITY)
    panes = [cls(id=cls.SPEC.name) for cls in PANES]
    compared, frozen, scales = 0, None, set()
    for k, (f, (window, pause, (width, height))) in enumerate(zip(frames, _plan(len(frames)))):
        history.push(f)
        frozen = (frozen or history.end_t) if pause else None
        t1 = frozen if frozen is not None else history.end_t
        view = View(history, SESSION, t1 - window, t1)
        kept = [_lines(p, view, width, height) for p in panes]

        scratch = FrameHistory(capacity=CAPACITY)
        scratch.extend(frames[:k + 1])
        plot._SHARED_AXIS[:] = [lambda: None, None, None]  # nothing shared with the kept drawing
        fresh_view = View(scratch, SESSION, t1 - window, t1)
        for pane, lines in zip(panes, kept):
            fresh = type(pane)(id=pane.id)
            if hasattr(pane, "selected"):  # the devices pane: the device it charts
                fresh.selected = pane.selected
            assert lines == _lines(fresh, fresh_view, width, height), (k, pane.id)
            compared += 1
        scales.add("".join(t for t, _ in kept[1][1]).split("┤")[0])  # the writes chart's top label
    assert compared == 6 * len(frames) and len(history) < len(frames)  # every tick, and trimmed
    assert len(scales) > 2  # rescaled, up and back down
