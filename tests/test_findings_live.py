"""Live findings (issue 27): while the live TUI records, a finding is notified once when its rule
first fires on the file so far, not again at each later reading. Real cluster, real recording: the
read set of pgbench -S over 16MB of shared_buffers (the cheapest planted scenario)."""

from __future__ import annotations

import subprocess

import pytest
from tui_support import wait_for

from pgio_tui.analysis.findings import findings_of_file
from pgio_tui.sampler import Sampler
from pgio_tui.tui.app import MonitorApp
from pgio_tui.tui.feed import LiveFeed
from pgio_tui.tui.live_findings import FindingsWatch
from pgio_tui.tui.session import session_from_sampler
from pgio_tui.workloads.pg_binaries import find_client


@pytest.mark.asyncio
async def test_a_finding_is_notified_once_as_it_forms(make_cluster, tmp_path):
    cluster = make_cluster(shared_buffers="16MB")
    client = str(find_client())
    subprocess.run([client, "-i", "-s", "5", "-q", cluster.conninfo()], check=True, capture_output=True, timeout=120)
    path = tmp_path / "live.pgio"
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    reads = None
    try:
        feed = LiveFeed(sampler, record_path=str(path))
        app = MonitorApp(session_from_sampler(sampler), source=feed)
        app.findings = FindingsWatch(every_s=2.0)  # the rules read the file every 2 s here, not every 10 s

        def told():
            return [n.message for n in app._notifications if n.message.startswith("reads_do_not_fit: ")]

        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(app.history) >= 2, timeout=20)
            reads = subprocess.Popen([client, "-S", "-c", "2", "-T", "8", cluster.conninfo()],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await wait_for(pilot, lambda: told(), timeout=60)
            first = app.findings.readings
            await wait_for(pilot, lambda: app.findings.readings >= first + 3, timeout=30)  # three readings later
            assert len(told()) == 1, told()
            assert "reads_do_not_fit" in app.findings.last  # still found by the last reading: not told again
            await pilot.press("q")
        assert feed.wait_closed(10)
    finally:
        if reads is not None:
            reads.wait(30)
        sampler.close()
    assert "reads_do_not_fit" in {f.id for f in findings_of_file(path, "start")}  # the finished file says it too
