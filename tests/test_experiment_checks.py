"""`experiment run --set` is checked before anything runs: every name and value against the server's
pg_settings (and its own SET where a session may), agreeing with what ALTER SYSTEM itself accepts;
a bad one fails before the init and leaves no folder, and so does a failure before the first run."""

from __future__ import annotations

import pytest
import psycopg
from psycopg import sql

from pgio_tui import cli
from pgio_tui.experiments import settings as guc
from test_experiment_run import conn_args

# (name, value): reload (sighup), restart (postmaster), superuser and user settings, every vartype,
# units, hidden boolean spellings of enums, hex and octal integers, the ends of the ranges.
CASES = [
    ("checkpoint_completion_target", "0.5"), ("checkpoint_completion_target", "banana"),
    ("checkpoint_completion_target", "7"), ("checkpoint_completion_target", "1"),
    ("checkpoint_completion_target", "-0.1"), ("checkpoint_completion_target", "nan"),
    ("checkpoint_timeout", "30s"), ("checkpoint_timeout", "29s"), ("checkpoint_timeout", "5min"),
    ("checkpoint_timeout", "1d"), ("checkpoint_timeout", "2d"), ("checkpoint_timeout", "10MB"),
    ("checkpoint_timeout", "300"), ("checkpoint_timeout", "5 min"), ("checkpoint_timeout", "5 mins"),
    ("max_wal_size", "1GB"), ("max_wal_size", "1.5GB"), ("max_wal_size", "1xB"), ("max_wal_size", "1gb"),
    ("shared_buffers", "16MB"), ("shared_buffers", "1kB"), ("shared_buffers", "0x100"),
    ("wal_sync_method", "fdatasync"), ("wal_sync_method", "banana"),
    ("huge_pages", "try"), ("huge_pages", "true"), ("huge_pages", "maybe"),
    ("fsync", "on"), ("fsync", "of"), ("fsync", "ye"), ("fsync", "banana"), ("fsync", "2"),
    ("bgwriter_delay", "100ms"), ("bgwriter_delay", "5"), ("bgwriter_delay", "10001"), ("bgwriter_delay", "1s"),
    ("bgwriter_lru_multiplier", "2.5"), ("bgwriter_lru_multiplier", "11"),
    ("backend_flush_after", "64kB"), ("backend_flush_after", "3MB"), ("backend_flush_after", "010"),
    ("wal_compression", "pglz"), ("wal_compression", "banana"), ("synchronous_commit", "yes"),
    ("work_mem", "4MB"), ("work_mem", "-1"), ("effective_io_concurrency", "0x10"),
    ("log_line_prefix", "%m [%p] "),
]


def alter_system_takes(conn: psycopg.Connection, name: str, value: str) -> bool:
    """The truth: does ALTER SYSTEM accept it? (RESET right after, so nothing stays.)"""
    try:
        conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
    except psycopg.Error:
        return False
    conn.execute(sql.SQL("ALTER SYSTEM RESET {}").format(sql.Identifier(name)))
    return True


def test_the_checks_agree_with_alter_system(make_cluster):
    cluster = make_cluster()
    disagree = []
    with cluster.connect() as conn:
        conn.autocommit = True
        for name, value in CASES:
            try:
                guc.check_values(cluster.conninfo(), {name: [value]})
                ours = True
            except guc.SettingsError:
                ours = False
            if ours != alter_system_takes(conn, name, value):
                disagree.append((name, value, ours))
    assert disagree == []
    with pytest.raises(guc.SettingsError, match=r"^--set checkpoint_completion_target=7: out of range: 0 to 1$"):
        guc.check_values(cluster.conninfo(), {"checkpoint_completion_target": ["0.5", "7"]})
    with pytest.raises(guc.SettingsError, match="did you mean checkpoint_completion_target"):
        guc.check_values(cluster.conninfo(), {"checkpoint_completion_targt": ["0.5"]})
    with pytest.raises(guc.SettingsError, match="block_size: read-only"):
        guc.check_values(cluster.conninfo(), {"block_size": ["8192"]})


def pgbench_tables(cluster) -> int:
    with cluster.connect() as conn:
        return conn.execute("select count(*) from pg_class where relname like 'pgbench%'").fetchone()[0]


@pytest.mark.parametrize("sweep, says", [
    ("checkpoint_completion_target=0.5,banana", "--set checkpoint_completion_target=banana: not a number"),
    ("checkpoint_completion_target=0.5,7", "--set checkpoint_completion_target=7: out of range: 0 to 1"),
    ("checkpoint_completion_targt=0.5,0.9", "no such setting in pg_settings; did you mean checkpoint_completion_target?"),
    # a string the server's hook refuses: found by ALTER SYSTEM at the first run, after the folder was made
    ("log_timezone=Nowhere/Banana,UTC", "nothing was kept: correct the command and run it again"),
])
def test_a_bad_value_fails_before_anything_runs_and_leaves_no_folder(sweep, says, make_cluster, tmp_path, capsys):
    cluster = make_cluster()
    out = tmp_path / "exp"
    argv = ["experiment", "run", *conn_args(cluster), "--allow-settings", "--init-scale", "1", "--no-discard-first",
            "--repeat", "1", "--set", sweep, "-o", str(out), "--quiet", "pgbench", "--", "-T", "2"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last.startswith("pgio-tui: error: ") and says in last, err
    assert not out.exists()
    if "nothing was kept" not in says:
        assert pgbench_tables(cluster) == 0  # the init never ran
    fixed = sweep.replace("banana", "0.9").replace(",7", ",0.9").replace("targt", "target").replace("Nowhere/Banana", "GMT")
    argv[argv.index(sweep)] = fixed
    assert cli.main(argv) == 0, capsys.readouterr().err  # the corrected command is not refused
    assert (out / "experiment.json").exists()
