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


ALL = metrics.CATALOG + metrics.DISK_METRICS + metrics.SOURCE_METRICS + metrics.IO_METRICS + metrics.STATEMENT_METRICS + \
    metrics.BACKEND_METRICS


@pytest.mark.parametrize("m", ALL, ids=lambda m: m.name)
def test_every_entry_names_its_source_unit_and_reference(m):
    """A catalog entry says where it comes from, in a unit the catalog knows (which says how it is
    written, stored and exported), and what it is checked against (Truth III)."""
    assert m.source.strip(), f"{m.name}: no source"
    assert isinstance(m.unit, metrics.Unit) and metrics.UNITS.get(m.unit) is m.unit, f"{m.name}: unit {m.unit!r}"
    ref = m.reference
    assert ref is not None and ref.kind in metrics.REFERENCE_KINDS, f"{m.name}: no reference"
    if ref.kind == "derived":  # a derivation names metrics that have references of their own
        assert ref.of and all(metrics.lookup(n) is not None and metrics.lookup(n).reference for n in ref.of), m.name
    if m.read is not None:  # a PostgreSQL counter read from the tick statement says how it is published
        assert m.kind != "rate" or m.published in (metrics.AS_WRITTEN, metrics.BURSTY), m.name


def test_unit_is_its_symbol():
    m = metrics.lookup(metrics.WAL_SYNC_TIME_MS_S)
    assert m.unit == "ms/s" and str(m.unit) == "ms/s" and {m.unit: 1}["ms/s"] == 1 and f"{m.unit}" == "ms/s"
    assert metrics.lookup(metrics.MEM_DIRTY_KB).fmt(2048) == "2.0M" and m.unit.to_base == 1e-3


def test_tables_of_the_sampler_are_derived_from_the_catalog():
    """COUNTER_RATES and PUBLISHED_AS_WRITTEN are the catalog's `read` and `published`, not lists of
    their own: a counter read from a view needs its catalog entry and its SQL column, nothing else."""
    from pgio_tui.sampler.rates import COUNTER_RATES
    from pgio_tui.sources.pg_counters import PUBLISHED_AS_WRITTEN

    reads = {m.name: (m.read.section, m.read.column) for m in metrics.CATALOG if m.read and m.kind == "rate"}
    assert {name: (sec, col) for name, sec, col in COUNTER_RATES} == reads
    assert {metrics.WAL_SYNC_TIME_MS_S, metrics.DB_BLKS_READ_S} <= set(reads)
    steady = {m.name for m in metrics.CATALOG if m.published == metrics.AS_WRITTEN}
    assert steady == {metrics.WRITES_CHECKPOINTER, metrics.WRITES_BGWRITER, metrics.FSYNCS_CHECKPOINTER,
                      metrics.BGWRITER_MAXWRITTEN_S, metrics.BUFFERS_ALLOC_S}
    assert PUBLISHED_AS_WRITTEN == steady | {f"{b}.{f}" for b in ("checkpointer", "background writer")
                                             for f in ("reads", "writes", "extends", "fsyncs", "writebacks", "hits",
                                                       "evictions")}
