"""The metric catalog is the public contract: docs come from it and every emitted name is in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgio_tui import metrics, metrics_doc
from pgio_tui.sampler import Sampler

DOCS = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"


def test_docs_are_generated_from_the_catalog():
    assert DOCS.read_text() == metrics_doc.markdown() + "\n", "run: python -m pgio_tui.metrics_doc > docs/metrics.md"


def test_names_follow_the_convention():
    for m in metrics.CATALOG + metrics.DISK_METRICS:
        group, _, rest = m.name.partition(".")
        assert group and rest and m.name == m.name.lower(), m.name
        assert m.kind in ("gauge", "rate", "state") and m.help and m.source


@pytest.mark.matrix
def test_every_value_a_live_sampler_emits_is_in_the_catalog(pg_cluster):
    sampler = Sampler(pg_cluster.conninfo(), interval=0.2)
    sampler.open()
    try:
        frames = list(sampler.frames(duration=0.6))
    finally:
        sampler.close()
    for frame in frames:
        for name in frame.flat():
            assert metrics.lookup(name) is not None, name
    last = frames[-1]
    for name in ("writes.checkpointer", "mem.dirty_kb", "checkpoint.active", "observer.server_ms", "wal.bytes_s"):
        assert last.values.get(name) is not None, name
