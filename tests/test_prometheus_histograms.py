"""Latency as a Prometheus histogram: the per-tick log buckets summed into the fixed `le` layout,
live (/metrics, parsed back by prometheus-client and checked by promtool) and exported."""

from __future__ import annotations

import io
import random

import pytest
from prom_support import http_get, promtool_check_metrics
from prometheus_client.parser import text_string_to_metric_families

from pgio_tui.export.histograms import BOUNDS_S, LE
from pgio_tui.export.openmetrics import write_openmetrics
from pgio_tui.export.prometheus import Exporter
from pgio_tui.export.promnames import Converter
from pgio_tui.frame import Frame
from pgio_tui.quantiles import buckets_of
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder

NAME = "pgio_transaction_duration_seconds"


def latency_frames(n: int = 40, seed: int = 1) -> tuple[list[Frame], list[float]]:
    """Ticks of a workload's latencies (ms), log-normal around 3 ms with a slow tail; none on tick 0."""
    rng = random.Random(seed)
    frames, every = [], []
    for tick in range(n):
        values = [] if tick == 0 else [rng.lognormvariate(1.1, 0.9) for _ in range(300)] + [rng.uniform(120, 900)]
        every += values
        frames.append(Frame(tick, 1_800_000_000.0 + tick, float(tick), None if tick == 0 else 1.0,
                            values={"observer.server_ms": 1.0}, latency_buckets=buckets_of(values)))
    return frames, every


def histogram_of(samples) -> dict[str, float]:
    return {(f.suffix + dict(labels).get("le", "")): v for f, labels, v in samples if f.name == NAME}


def test_buckets_count_the_transactions_under_each_bound():
    frames, every = latency_frames()
    conv = Converter("h:5432")
    assert histogram_of(conv.update(frames[0])) == {}  # no latencies yet: no series
    for f in frames[1:]:
        h = histogram_of(conv.update(f))
    counts = [h["_bucket" + le] for le in LE]
    assert counts == sorted(counts) and counts[-1] == h["_count"] == len(every)
    for bound, le in zip(BOUNDS_S, LE):  # within the 1 % buckets' half-width of each bound
        lo = sum(v <= bound * 1000 * 0.995 for v in every)
        hi = sum(v <= bound * 1000 * 1.005 for v in every)
        assert lo <= h["_bucket" + le] <= hi, (le, lo, h["_bucket" + le], hi)
    assert h["_sum"] == pytest.approx(sum(every) / 1000, rel=0.005)
    slower = h["_count"] - h["_bucket0.2"]  # what pgio_transactions_slower_total{threshold="0.2"} was
    assert slower == sum(v > 200 for v in every)


def test_the_endpoint_serves_a_valid_histogram():
    frames, every = latency_frames(10)
    exporter = Exporter("h:5432", port=0)
    url = exporter.start()
    try:
        for f in frames:
            exporter.on_frame(f)
        for accept in (None, "application/openmetrics-text; version=1.0.0"):
            ctype, text = http_get(url, accept)
            fams = {f.name: f for f in text_string_to_metric_families(text)} if accept is None else None
            if fams is not None:
                hist = fams[NAME]
                assert hist.type == "histogram"
                buckets = [s for s in hist.samples if s.name == NAME + "_bucket"]
                assert [s.labels["le"] for s in buckets] == list(LE)
                assert buckets[-1].value == len(every)
            assert text.count(f"# TYPE {NAME} histogram") == 1
        check = promtool_check_metrics(http_get(url)[1])
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        exporter.close()


def test_the_export_backfills_the_histogram(tmp_path):
    frames, every = latency_frames(12)
    path = tmp_path / "lat.pgio"
    with Recorder(path, meta={"interval_s": 1.0, "host": "h", "port": 5432}) as rec:
        for f in frames:
            rec.write(f)
    out = io.StringIO()
    with Recording(path) as rec:
        write_openmetrics(rec, out)
    text = out.getvalue()
    assert f"# TYPE {NAME} histogram\n# UNIT {NAME} seconds\n" in text
    last = {}
    for line in text.splitlines():
        if line.startswith(NAME):
            series, value, _ts = line.rsplit(" ", 2)
            last[series] = float(value)
    assert last[f'{NAME}_bucket{{server="h:5432",le="+Inf"}}'] == last[f'{NAME}_count{{server="h:5432"}}'] == len(every)


def test_the_docs_give_the_layout():
    from pathlib import Path

    from pgio_tui.export.histograms import markdown
    docs = (Path(__file__).resolve().parent.parent / "docs" / "prometheus.md").read_text()
    assert markdown().replace("+Inf", "`+Inf`") in docs
