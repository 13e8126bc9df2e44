"""PostgreSQL 19 by introspection, before any registry serves it: a real cluster whose catalog is
given 19's shape (pg_stat_wal.wal_fpi_bytes, pg_stat_lock, pg_stat_recovery, under
allow_system_table_mods) is read as 19 would be; the BufferPin -> Buffer wait type rename is data."""

from __future__ import annotations

import time

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler
from pgio_tui.sources.pg_counters import wait_type_key
from pgio_tui.sources.pgfeatures import IO_SETTINGS, NEWER_VIEWS
from pgio_tui.tui.widgets.waits_pane import TYPE_STYLE

# wal_fpi_bytes (19) against its own delta, on a catalog given 19's shape
CHECKS = {M.WAL_FPI_BYTES_S: "view"}

# pg_stat_wal's own definition with a wal_fpi_bytes column at its end (as 19 has it): 1 kB per image.
FPI_BYTES = "CREATE OR REPLACE VIEW pg_catalog.pg_stat_wal AS SELECT w.*, w.wal_fpi * 1024 AS wal_fpi_bytes FROM ({}) w"


def test_the_wait_type_rename_is_data():
    assert wait_type_key("BufferPin") == wait_type_key("Buffer") == "Buffer"
    assert TYPE_STYLE[wait_type_key("BufferPin")] == TYPE_STYLE[wait_type_key("Buffer")]
    assert wait_type_key("IO") == "IO" and wait_type_key(None) is None


def test_the_io_worker_settings_are_in_the_snapshot_list():
    assert {"io_min_workers", "io_max_workers", "io_worker_idle_timeout", "io_worker_launch_interval"} <= set(IO_SETTINGS)


@pytest.mark.matrix
def test_a_19_shaped_catalog_is_read_as_19(make_cluster):
    cluster = make_cluster(allow_system_table_mods="on")
    with cluster.connect() as conn:
        major = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
        if major < 14:  # no pg_stat_wal to give a column
            pytest.skip("pg_stat_wal is 14+")
        if major >= 19:
            pytest.skip("a real 19 catalog: the matrix runs the other tests on it")
        definition = conn.execute("SELECT pg_get_viewdef('pg_catalog.pg_stat_wal'::regclass)").fetchone()[0]
        conn.execute(FPI_BYTES.format(definition.rstrip().rstrip(";")))
        for view in NEWER_VIEWS:
            conn.execute(f"CREATE VIEW pg_catalog.{view} AS SELECT 0 AS n")
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    try:
        sampler.server.final = True  # as published, no spreading
        assert set(sampler.pg.features.new_views) == set(NEWER_VIEWS)
        assert any("pg_stat_recovery" in n and "pg_stat_lock" in n for n in sampler.pg.features.notes)
        assert sampler.pg.features.summary()["newer_views"] == list(NEWER_VIEWS)
        with cluster.connect() as conn:
            before = conn.execute("SELECT wal_fpi_bytes FROM pg_stat_wal").fetchone()[0]
        sampler.sample(0, 0.0)
        with cluster.connect() as conn:
            conn.execute("CREATE TABLE f AS SELECT g FROM generate_series(1, 20000) g")
            conn.execute("CHECKPOINT")
            conn.execute("UPDATE f SET g = g + 1")  # the first change of each page after a checkpoint: an image
        time.sleep(1.2)
        frame = sampler.sample(1, 1.0)
        with cluster.connect() as conn:
            after = conn.execute("SELECT wal_fpi_bytes FROM pg_stat_wal").fetchone()[0]
    finally:
        sampler.close()
    got = frame.values[M.WAL_FPI_BYTES_S]
    assert after - before > 0 and got is not None
    assert got * frame.dt == pytest.approx(float(after - before), rel=1e-9)
    assert got == pytest.approx(frame.values[M.WAL_FPI_S] * 1024, rel=1e-9)
