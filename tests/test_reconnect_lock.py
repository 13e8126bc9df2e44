"""The live tick never waits on a server that is slow to accept (issue 10, finding 7): with
pg_database locked, every backend's start-up blocks for the whole connect_timeout, yet the ticks
keep their schedule and the /proc figures keep coming; the reconnect lands once the lock goes."""

from __future__ import annotations

import threading
import time

import pytest

from pgio_tui.sampler import Sampler

pytestmark = pytest.mark.pg


def test_reconnect_behind_a_pg_database_lock_does_not_stall_ticks(make_cluster):
    cluster = make_cluster()
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    stop = threading.Event()
    frames = []
    holder = cluster.connect(autocommit=False)
    admin = cluster.connect()  # made before the lock, which holds back new sessions
    try:
        for frame in sampler.frames(stop):
            frames.append((time.monotonic(), frame))
            n = len(frames)
            if n == 3:  # lock pg_database, then cut the sampler's session: it must reconnect
                holder.execute("LOCK TABLE pg_database IN ACCESS EXCLUSIVE MODE")
                admin.execute("select pg_terminate_backend(%s)", [sampler.pg.conn.info.backend_pid])
            if n == 16:
                holder.rollback()
            if n >= 30 or (n > 16 and any(e.kind == "reconnect" for e in frame.events)):
                break
    finally:
        stop.set()
        holder.close()
        admin.close()
        sampler.close()
    locked = [(m, f) for m, f in frames[3:16]]
    gaps = [b[0] - a[0] for a, b in zip(locked, locked[1:])]
    assert max(gaps) < 1.5, f"a tick waited {max(gaps):.1f} s behind the connect"
    down = [f for _, f in locked if "latency.tps" not in f.values and "db.xact_s" not in f.values]
    assert down and all("mem.dirty_kb" in f.values for f in down)  # the OS figures keep coming
    assert any(e.kind == "reconnect" for _, f in frames for e in f.events)

