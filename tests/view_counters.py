"""The views' own counters, read apart from the sampler and once the statistics have settled: what
a recording's per-second rates must add up to."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from pgio_tui.sources import pg_counters

T = TypeVar("T")


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


# Before 15 a backend reads the statistics collector's file and takes one up to 0.5 s old as fresh:
# two reads closer than that can show the same old file while a backend's stats are still on the way.
SETTLE_S = 0.7


def settled(read: Callable[[], T], what: str, timeout_s: float = 20.0) -> T:
    """read() once two reads SETTLE_S apart agree (every process's statistics published)."""
    last, deadline = read(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(SETTLE_S)
        now = read()
        if now == last:
            return now
        last = now
    pytest.fail(f"{what} never settled")


def settled_writes(conn) -> dict:
    """raw_writes once settled: the baseline before a recorded window.

    The first read after a CHECKPOINT returns can lack that checkpoint's writes (see SETTLE_S); they
    would then count in the views' delta but fall before the recording's first tick. On 14, a read
    right after `pgbench -i -s 5` and CHECKPOINT lacked that checkpoint's writes in 2 of 3 tries
    (1,091 and 1,075 buffers; 1,091 is the very shortfall a CI run once recorded)."""
    return settled(lambda: raw_writes(conn), "writes by source")


def quiet_window(sampler, read: Callable[[], T], work: Callable[[int, T], None], what: str,
                 tries: int = 3) -> tuple[T, T, object]:
    """(before, after, frame): the view's settled counters around `work(attempt, before)` and the
    sampler's tick over exactly that window (its last: every burst paid out). A background process
    publishing just before or after a tick spoils the window: another one is taken."""
    for attempt in range(tries):
        before = settled(read, what)
        sampler.sample(0, 0.0)
        if read() != before:
            continue
        work(attempt, before)
        after = settled(read, what)
        sampler.server.final = True  # the window's last tick: pay out every burst (publication.py)
        frame = sampler.sample(1, 1.0)
        if read() == after:
            return before, after, frame
    pytest.fail("the server never stayed quiet around a tick")
