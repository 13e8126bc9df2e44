"""Issue 11: text that does not fit its pane is dropped or shortened at a word, never cut mid-word or
mid-number (`─throttle 4.6`, `(ela`, `(tick/wind` were seen); and the diff's device charts offer a
device holding both PGDATA and pg_wal once, named by both roles."""

from __future__ import annotations

import re

import pytest
from test_diff_agreement import write_shared
from tui_support import FakeSampler, StubWorkload, wait_for

from pgio_tui.analysis.compare import compare
from pgio_tui.store.reader import Recording
from pgio_tui.tui.app import MonitorApp, recording_app
from pgio_tui.tui.diff_screen import diff_app
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.tui.widgets.diff_overlay_pane import OverlayPane
from pgio_tui.tui.widgets.lines import LinesView
from pgio_tui.tui.widgets.memory_pane import MemoryPane
from pgio_tui.tui.widgets.status import WorkloadStrip

INIT_LINE = "1000000 of 10000000 tuples (10%) of pgbench_accounts done (elapsed 1.23 s, remaining 11.07 s)"


def shown(line) -> str:
    return "".join(t for t, _ in line)


def cut(text: str) -> bool:
    """A text cut mid-way: an unclosed parenthesis, or a legend label without its number."""
    return bool(re.search(r"\([^)]*$", text.rstrip()) or re.search(r"(─|■)\w+ ?$", text.rstrip()))


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)], ids=["80x24", "120x40", "160x48"])
async def test_pane_texts_are_whole_or_absent(fixture_file, size):
    with Recording(fixture_file) as rec:
        app = recording_app(rec, theme="pgio-dark")
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        for view in app.screen.query(LinesView):
            for line in view._lines:
                text = shown(line)[: view.size.width]
                assert not cut(text), f"{type(view).__name__} at {size}: {text!r}"
        texts = [shown(line) for v in app.screen.query(LinesView) for line in v._lines]
        assert any(t.startswith("> ms 100:") for t in texts) == (size[0] >= 120)  # the Latency pane's counts


@pytest.mark.asyncio
async def test_dirty_legend_keeps_each_threshold_with_its_value(fixture_file):
    with Recording(fixture_file) as rec:
        app = recording_app(rec, theme="pgio-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        pane = app.screen.query_one(MemoryPane)
        h = app.history
        t1 = h.t[-1]
        full = shown(pane.chart.lines(h, t1 - 300, t1, 200, 8)[0])
        assert re.search(r"─throttle [\d.]+[KMGT]?", full)
        for width in range(20, len(full.rstrip()) + 1):
            legend = shown(pane.chart.lines(h, t1 - 300, t1, width, 8)[0])
            assert full.startswith(legend.rstrip()) and not cut(legend), (width, legend)
            assert "throttle" not in legend or re.search(r"─throttle [\d.]+", legend), (width, legend)


class InitWorkload(StubWorkload):
    phase = "setup"
    progress = 0.1

    def output_tail(self, n: int = 20) -> list[str]:
        return [INIT_LINE, INIT_LINE][-n:]


@pytest.mark.asyncio
async def test_pgbench_init_progress_is_cut_at_a_word(tmp_path):
    workload = InitWorkload()
    sampler = FakeSampler()
    app = MonitorApp(session_from_sampler(sampler), source=LiveFeed(sampler, workload=workload), workload=workload,
                     recordings_dir=str(tmp_path / "recordings"))
    async with app.run_test(size=(80, 24)) as pilot:
        strip = app.screen.query_one(WorkloadStrip)
        await wait_for(pilot, lambda: len(strip._lines) == 3)
        tail = shown(strip._lines[1])
        assert len(tail) <= 80 and tail.strip() and (" " + INIT_LINE).startswith(tail)
        rest = (" " + INIT_LINE)[len(tail):]
        assert rest.startswith(" ") and "(ela" not in tail.split()[-1]


@pytest.mark.asyncio
async def test_diff_device_charts_offer_a_shared_device_once(tmp_path):
    a, b = write_shared(tmp_path / "a.pgio"), write_shared(tmp_path / "b.pgio")
    app = diff_app(compare(a, b, "workload"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("2")  # the Charts tab
        await pilot.pause()
        pane = app.screen.query_one("#chart-devices", OverlayPane)
        labels = [c.label for c in pane.choices]
        assert "PGDATA+WAL util %" in labels and "PGDATA+WAL w_await ms" in labels
        assert not any(lab.startswith(("PGDATA ", "WAL ")) for lab in labels), labels
