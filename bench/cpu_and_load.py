"""What the cost benches share: a process's CPU time, the percentile they print, a lab cluster
kept busy by pgbench for the whole measuring window, and the trees measured before and after.

Run from the bench scripts (`python bench/<name>.py`), which find this module beside them.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pgio_tui.stats import percentile
from pgio_tui.workloads.cluster import Cluster
from pgio_tui.workloads.pg_binaries import find_client

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (all its threads), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0-1) by the project's one definition (pgio_tui.stats); NaN for no values."""
    p = percentile(sorted(values), q * 100)
    return float("nan") if p is None else p


@contextmanager
def pgbench_load(clients: int, scale: int, seconds: float) -> Iterator[tuple[Cluster, Path]]:
    """A lab cluster (checkpoint_timeout 60 s) under `pgbench -c clients` for `seconds`, and a
    scratch directory; both are removed afterwards."""
    cluster = Cluster(settings={"checkpoint_timeout": "60s"})
    cluster.init()
    cluster.start()
    pgbench = str(find_client("pgbench"))
    tmp = Path(tempfile.mkdtemp(prefix="pgio-bench-"))
    load = None
    try:
        subprocess.run([pgbench, "-i", "-q", "-s", str(scale), cluster.conninfo()], check=True,
                       capture_output=True)
        load = subprocess.Popen([pgbench, "-c", str(clients), "-j", "2", "-T", str(int(seconds)),
                                 cluster.conninfo()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        yield cluster, tmp
    finally:
        if load is not None:
            load.terminate()
            load.wait(timeout=30)
        cluster.destroy()
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()


def interleaved(root: Path, baseline: Path | None) -> list[tuple[str, str]]:
    """(label, source tree) to measure in turn: this tree alone, or with --baseline DIR baseline,
    this, this, baseline, so a drift in the machine's load falls on both alike."""
    this = ("this tree", str(root))
    if baseline is None:
        return [this]
    base = (f"baseline {baseline}", str(baseline.resolve()))
    return [base, this, this, base]
