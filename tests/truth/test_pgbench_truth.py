"""Truth: every pgbench-kind metric, tick by tick, against pgbench's own per-transaction log.

`bench pgbench --record` with one pgbench thread (-j 1: one log file, lines in the order the
transactions ended) and pgbench's log kept (-l --log-prefix). The log is parsed here on its own
(`client txn latency_us script epoch us`). A tick counts each transaction once, at the first tick
at or after its end at which it was read: so the recording's cumulative counts cut the log into
consecutive slices, one per tick. Each slice must hold only transactions that had ended by its tick,
and every figure of the tick is recomputed from its slice by hand.

Tolerances: counts (txns, failed, over_<N>ms) exact; latencies (mean, stddev, max, p50/p95/p99) the
recording's 3 significant digits (0.5 % relative, never finer than 0.001 ms); tps half a transaction
per interval (a rate is kept to one event per nominal interval) plus the stored dt's 1 ms; a transaction's end before its tick
to 1 ms (the log's microseconds against the tick's clock, the same machine's, stored to 1 ms).
"""

from __future__ import annotations

import glob
import math

import pytest

from pgio_tui import cli
from pgio_tui import metrics as M
from pgio_tui.store.reader import Recording

_LAT = (M.LATENCY_MEAN_MS, M.LATENCY_STDDEV_MS, *M.LATENCY_P.values(), M.LATENCY_MAX_MS)
_COUNTS = (M.LATENCY_TXNS, M.LATENCY_FAILED, *M.LATENCY_OVER.values())
# metric -> reference kind (metrics.REFERENCE_KINDS): pgbench's per-transaction log
CHECKS = dict.fromkeys((M.LATENCY_TPS, *_LAT, *_COUNTS), "pgbench")


def _log(prefix: str) -> list[tuple[float, float | None, str]]:
    """(end epoch s, latency ms or None, status) per line, in file order."""
    (path,) = glob.glob(prefix + ".*")  # -j 1: one file
    out = []
    for line in open(path):
        f = line.split()
        lat = f[2]
        status = {"skipped": "skipped", "failed": "failed"}.get(lat, "ok")
        out.append((int(f[4]) + int(f[5]) / 1e6, float(lat) / 1000 if status == "ok" else None, status))
    return out


def _pct(ordered: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (what pgio-tui states it uses)."""
    pos = (len(ordered) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _by_hand(lats: list[float], failed: int) -> dict:
    n = len(lats)
    if not n:
        return {M.LATENCY_TXNS: 0, M.LATENCY_FAILED: failed}
    mean = sum(lats) / n
    o = sorted(lats)
    out = {M.LATENCY_TXNS: n, M.LATENCY_FAILED: failed, M.LATENCY_MEAN_MS: mean,
           M.LATENCY_STDDEV_MS: math.sqrt(sum((x - mean) ** 2 for x in lats) / n), M.LATENCY_MAX_MS: o[-1]}
    out.update({M.LATENCY_P[p]: _pct(o, p) for p in M.LATENCY_PERCENTILES})
    out.update({M.LATENCY_OVER[ms]: sum(1 for x in lats if x > ms) for ms in M.LATENCY_THRESHOLDS_MS})
    return out


@pytest.mark.matrix
def test_every_tick_is_its_slice_of_pgbenchs_log(pg_cluster, tmp_path, capsys):
    with pg_cluster.connect(autocommit=True) as conn:
        conn.execute("CREATE DATABASE truth_pgbench")
    path, prefix = tmp_path / "bench.pgio", str(tmp_path / "own")
    rc = cli.main(["bench", "pgbench", "-d", pg_cluster.conninfo("truth_pgbench"), "--init-scale", "1",
                   "--headless", "--record", str(path), "--", "-c", "4", "-j", "1", "-T", "6", "-l",
                   f"--log-prefix={prefix}"])
    assert rc == 0
    log = _log(prefix)
    with Recording(path) as rec:
        interval = float(rec.meta["interval_s"])
        frames = [f for f in rec.frames() if f.values.get(M.LATENCY_TXNS) is not None]
    done, compared = 0, 0
    for frame in frames:
        n = int(frame.values[M.LATENCY_TXNS] + (frame.values.get(M.LATENCY_FAILED) or 0))
        part = log[done:done + n]
        done += n
        assert all(end <= frame.t + 0.001 for end, _, _ in part), f"tick {frame.tick} counts a transaction before it ended"
        want = _by_hand([lat for _, lat, s in part if s == "ok"], sum(1 for *_, s in part if s == "failed"))
        for m in _COUNTS:
            assert frame.values.get(m) == want.get(m, 0), f"tick {frame.tick} {m}: {frame.values.get(m)} vs log {want.get(m)}"
        for m in _LAT:
            got, ref = frame.values.get(m), want.get(m)
            if ref is None:
                assert got is None, f"tick {frame.tick} {m}: {got} with no transaction"
                continue
            assert got == pytest.approx(ref, rel=5e-3, abs=1e-3), f"tick {frame.tick} {m}: {got} vs log {ref}"
            compared += 1
        tps = frame.values[M.LATENCY_TPS]
        assert abs(tps * frame.dt - want[M.LATENCY_TXNS]) <= 0.5 * frame.dt / interval + tps * 0.0005 + 1e-6, \
            f"tick {frame.tick} tps {tps} x {frame.dt} s vs {want[M.LATENCY_TXNS]} transactions"
    assert done == len(log), f"the recording counts {done} transactions, pgbench's log {len(log)}"
    assert len(frames) >= 5 and compared > 20
    with capsys.disabled():
        print(f"\n{len(log)} logged transactions in {len(frames)} ticks, each tick's figures equal its slice's")
