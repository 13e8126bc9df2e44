"""Truth: the settings a recording carries per tick against pg_settings, across a reload mid-run.

The per-tick statement takes the settings' fingerprint only when the session re-read its
configuration (pg_conf_load_time(), tick_sql); here the fast result is checked against the slow one
(the full fingerprint of the same session) tick by tick, over a reload that defeats the shortcut.

Tolerance: one tick after a reload. A backend applies SIGHUP when it next reads a command, so the
tick after the reload may still run under the old settings; the one after it may not.
"""

from __future__ import annotations

import pytest

from pgio_tui import metrics as M
from pgio_tui.sampler import Sampler

# metric -> reference kind (metrics.REFERENCE_KINDS, as the catalog names it): here pg_settings
CHECKS = {M.CHECKPOINT_TIMEOUT_S: "view", M.CHECKPOINT_COMPLETION_TARGET: "view"}
pytestmark = pytest.mark.matrix  # version-sensitive: scripts/pg-matrix.sh runs it on 13-18
LAG_TICKS = 1  # see the module docstring


def _full(conn, names) -> tuple[str, str]:
    """The slow path: the full fingerprint of this session's settings, and its load time."""
    values = ", ".join(f"current_setting('{s}', true)" for s in names)
    return conn.execute(f"SELECT md5(concat_ws(',', {values})), pg_conf_load_time()::text").fetchone()


def _reference(admin) -> dict[str, float]:
    rows = dict(admin.execute("SELECT name, setting::float8 FROM pg_settings WHERE name IN "
                              "('checkpoint_timeout', 'checkpoint_completion_target')").fetchall())
    return {M.CHECKPOINT_TIMEOUT_S: rows["checkpoint_timeout"],
            M.CHECKPOINT_COMPLETION_TARGET: rows["checkpoint_completion_target"]}


def test_settings_follow_a_reload_mid_run(make_cluster):
    cluster = make_cluster()
    admin = cluster.connect(autocommit=True)
    sampler = Sampler(cluster.conninfo(), interval=0.5)
    sampler.open()
    pg = sampler.pg
    try:
        before = _reference(admin)
        mismatched_fast, compared, seen = [], 0, []
        reload_tick = 6
        for tick in range(16):
            if tick == reload_tick:
                admin.execute("ALTER SYSTEM SET checkpoint_timeout = '40s'")
                admin.execute("ALTER SYSTEM SET checkpoint_completion_target = 0.5")
                admin.execute("SELECT pg_reload_conf()")
                admin.execute("SELECT pg_sleep(0.2)")  # the postmaster signals the backends
            frame = sampler.sample(tick, tick * 0.5)
            md5_fast, conf_t = sampler.server._settings_md5, pg._conf_t
            md5_slow, load_t = _full(pg.conn, pg.features.settings)
            if load_t == conf_t:  # the session applied no reload between the tick and this check
                compared += 1
                if md5_fast != md5_slow:
                    mismatched_fast.append(tick)
            seen.append({k: frame.values.get(k) for k in CHECKS})
        after = _reference(admin)
        assert after != before and after[M.CHECKPOINT_TIMEOUT_S] == 40
        assert compared >= 12 and mismatched_fast == [], (compared, mismatched_fast)
        assert all(s == before for s in seen[:reload_tick]), seen
        # the reference after the reload, from tick reload_tick + LAG_TICKS on
        assert all(s == after for s in seen[reload_tick + LAG_TICKS:]), seen
    finally:
        admin.close()
        sampler.close()
