"""The views' own cumulative writes by source, read apart from the sampler: what a recording's
per-second rates must add up to."""

from __future__ import annotations

import time

from pgio_tui.sources import pg_counters


def raw_writes(conn) -> dict:
    """Cumulative writes by source (pg_counters.writes_by_source) from pg_stat_bgwriter and, 16+, pg_stat_io."""
    bg = conn.execute("SELECT row_to_json(b) FROM pg_stat_bgwriter b").fetchone()[0]
    io = None
    if conn.execute("SELECT to_regclass('pg_catalog.pg_stat_io') IS NOT NULL").fetchone()[0]:
        io = conn.execute(
            "SELECT json_object_agg(backend_type, json_build_array(r, w, e, fs, wb, h, ev)) FROM ("
            "SELECT backend_type, sum(reads) r, sum(writes) w, sum(extends) e, sum(fsyncs) fs, "
            "sum(writebacks) wb, sum(hits) h, sum(evictions) ev FROM pg_stat_io "
            "WHERE object = 'relation' GROUP BY backend_type) x").fetchone()[0]
    return pg_counters.writes_by_source(bg, io)


def settled_writes(conn, quiet_s: float = 1.0, timeout_s: float = 15.0) -> dict:
    """raw_writes once two reads `quiet_s` apart agree: the baseline before a recorded window.

    Before 15 a backend takes a statistics file the collector wrote up to 0.5 s earlier as fresh,
    so the first read after a CHECKPOINT returns can lack that checkpoint's writes; they would then
    count in the views' delta but fall before the recording's first tick. On 14, a read right after
    `pgbench -i -s 5` and CHECKPOINT lacked that checkpoint's writes in 2 of 3 tries (1,091 and
    1,075 buffers; 1,091 is the very shortfall a CI run once recorded)."""
    deadline = time.monotonic() + timeout_s
    prev = raw_writes(conn)
    while True:
        time.sleep(quiet_s)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        cur = raw_writes(conn)
        if cur == prev or time.monotonic() > deadline:
            return cur
        prev = cur
