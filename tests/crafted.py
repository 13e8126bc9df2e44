"""Crafted recordings: the classes of damage issue 10 found (schema objects swapped for views or
triggers, tables dropped, impossible schema versions, non-JSON JSON, text and blobs in numeric
columns, non-finite and absurd numbers), as SQL applied to a copy of a real recording. Shared by
tests/test_crafted_recordings.py (one named case each) and tests/test_fuzz_recordings.py (generated)."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from hostile import ESCAPES, INVISIBLE, MARKUP

RECURSIVE = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
             "SELECT n AS id, n AS tick, n AS t, 'x' AS kind, 'x' AS text, NULL AS data FROM r")
RECURSIVE_WAITS = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                   "SELECT n AS id, 'a' AS backend_type, 'b' AS wait_event_type, 'c' AS wait_event FROM r")

# name -> SQL statements (one named case per finding of issue 10, item 6)
CASES: dict[str, tuple[str, ...]] = {
    "schema_version 0": ("UPDATE meta SET value = 0 WHERE key = 'schema_version'",),
    "schema_version -1": ("UPDATE meta SET value = -1 WHERE key = 'schema_version'",),
    "schema_version 9e999": ("UPDATE meta SET value = 9e999 WHERE key = 'schema_version'",),
    "schema_version text": ("UPDATE meta SET value = 'one' WHERE key = 'schema_version'",),
    "no checkpoints table": ("DROP TABLE checkpoints",),
    "no events table": ("DROP TABLE events",),
    "no settings table": ("DROP TABLE settings",),
    "no disk table": ("DROP VIEW disk_named", "DROP TABLE disk"),
    "recursive view for events": ("DROP TABLE events", f"CREATE VIEW events AS {RECURSIVE}"),
    "recursive view for wait_events": ("DROP VIEW waits_named", "DROP TABLE wait_events",
                                       f"CREATE VIEW wait_events AS {RECURSIVE_WAITS}"),
    "a trigger": ("CREATE TRIGGER tr AFTER INSERT ON meta BEGIN DELETE FROM ticks; END",),
    "an extra view": (f"CREATE VIEW extra AS {RECURSIVE}",),
    "an unknown table": ("CREATE TABLE secrets (x)",),
    "non-JSON checkpoints.extra": ("UPDATE checkpoints SET extra = '{not json'",),
    "JSON array in checkpoints.extra": ("UPDATE checkpoints SET extra = '[1, 2]'",),
    "text in meta.interval_s": ("UPDATE meta SET value = 'fast' WHERE key = 'interval_s'",),
    "interval_s 9e999": ("UPDATE meta SET value = 9e999 WHERE key = 'interval_s'",),
    "t 1e300": ("UPDATE ticks SET t = 1e300 WHERE tick = 10",),
    "t 9e999": ("UPDATE ticks SET t = 9e999 WHERE tick = 10",),
    "t -1e18": ("UPDATE ticks SET t = -1e18 WHERE tick = 0",),
    "metrics 1e308": ("UPDATE ticks SET \"mem.dirty_kb\" = 1e308, \"writes.backend\" = -1e308",),
    "metrics 9e999": ("UPDATE ticks SET \"mem.dirty_kb\" = 9e999, \"writes.backend\" = -9e999, "
                      "\"latency.p99_ms\" = 9e999",),
    "blob in a metric": ("UPDATE ticks SET \"mem.dirty_kb\" = x'00ff', \"latency.mean_ms\" = x'1b5b324a'",),
    "text in a metric": ("UPDATE ticks SET \"writes.backend\" = 'many', \"latency.tps\" = '1e3'",),
    "text in disk": ("UPDATE disk SET w_await_us = 'slow', util_pct = x'00'",),
    "text in io": ("UPDATE io SET writes = 'lots'",),
    "text in waits.count": ("UPDATE waits SET count = 'some'",),
    "text in workloads.stop_t": ("UPDATE workloads SET stop_t = 'later', start_t = x'00'",),
    "text in events.t": ("UPDATE events SET t = 'then', tick = 'now', data = '[1]'",),
    "text in devices.first_tick": ("UPDATE devices SET first_tick = 'soon'",),
    "dangling device ids": ("UPDATE disk SET device_id = device_id + 100",),
    "dangling wait ids": ("UPDATE waits SET wait_id = wait_id + 100",),
    "non-JSON workloads": ("UPDATE workloads SET argv = '[broken', params = '{x', summary = '[]'",),
    "escapes everywhere": (("UPDATE meta SET value = ? WHERE key IN ('host', 'created_at')", (ESCAPES,)),
                           ("UPDATE events SET kind = ?", (MARKUP,))),
    "empty ticks": ("DELETE FROM ticks",),
    # issue 21 (Trust III)
    "latency_hist bucket 1e9": ("INSERT INTO latency_hist VALUES (1, 1000000000, 5)",),  # row 8
    "latency_hist buckets and counts out of range": ("INSERT INTO latency_hist VALUES (2, -7, 5)",
                                                     "INSERT INTO latency_hist VALUES (3, 100, 9223372036854775807)",
                                                     "INSERT INTO latency_hist VALUES (4, 101, 9223372036854775807)"),
    "a generated column": ("ALTER TABLE workloads ADD COLUMN g BLOB GENERATED ALWAYS AS (zeroblob(16000000)) "
                           "VIRTUAL",),  # row 11
    "a generated ticks column": ('ALTER TABLE ticks ADD COLUMN "mem.g" REAL GENERATED ALWAYS AS (1e308 * 10) '
                                 "VIRTUAL",),
    "a 1 MB host": ("UPDATE meta SET value = printf('%.*c', 1000000, 'H') WHERE key = 'host'",),  # row 4
    "1 MB device, setting, wait event and application texts": (
        "UPDATE devices SET name = printf('%.*c', 1000000, 'D') || id",
        "UPDATE settings SET value = printf('%.*c', 1000000, 'S') WHERE rowid % 2 = 0",
        "UPDATE wait_events SET wait_event = printf('%.*c', 1000000, 'W') || id",
        "UPDATE sources SET backend_type = printf('%.*c', 1000000, 'B') || id"),
    # pg_stat_io rows as counts over the tick (io_rows' *_n columns; the reader divides by dt)
    "text and non-finite numbers in io_rows": ("UPDATE io_rows SET reads_n = 'many', read_us_n = x'00', "
                                               "read_kb_beyond_blocks_n = 9e999, hits_n = -1e308",),
    "dt NULL, 0 and negative under io_rows": ("UPDATE ticks SET dt = CASE tick % 3 WHEN 0 THEN NULL WHEN 1 THEN 0 "
                                              "ELSE -1 END",),
    "io_rows with a column of the rates layout": ("ALTER TABLE io_rows ADD COLUMN reads REAL",),
}


def apply(src: Path, dst: Path, statements) -> Path:
    """A copy of recording `src` at `dst` with `statements` applied (as the file's owner could)."""
    shutil.copyfile(src, dst)
    c = sqlite3.connect(dst)
    try:
        for sql in statements:
            c.execute(sql) if isinstance(sql, str) else c.execute(*sql)
        c.commit()
    finally:
        c.close()
    return dst


# --- generated cases for the fuzz test -----------------------------------------------------------

BAD_VALUES = (None, 0, -1, 2 ** 63 - 1, -(2 ** 63), 1e308, -1e308, float("inf"), float("-inf"), float("nan"),
              1e300, -1e18, 0.5, "", "x", "1e3", "NaN", "{", "[1,2]", '{"a": 1}', "-1", ESCAPES, MARKUP,
              "=1+1", b"", b"\x00\xff", b"\x1b[2J", "null", "9e999", "\u202e", "a" * 10_000,
              INVISIBLE, 10 ** 9, "H" * 300_000)  # issue 21: format characters, a bucket of 1e9, a long name


def table_columns(path: Path) -> dict[str, list[str]]:
    c = sqlite3.connect(path)
    try:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: [r[1] for r in c.execute(f'PRAGMA table_info("{t}")')] for t in tables}
    finally:
        c.close()


def generated(rnd: random.Random, columns: dict[str, list[str]]) -> tuple[str, list]:
    """One random mutation: a value class into some rows of one column, or a schema change."""
    kind = rnd.random()
    if kind < 0.08:
        return "named", list(CASES[rnd.choice(sorted(CASES))])
    if kind < 0.14:
        table = rnd.choice(sorted(columns))
        how = rnd.choice(["drop", "view", "trigger", "index", "delete", "generated"])
        if how == "drop":
            return f"drop {table}", [f'DROP VIEW IF EXISTS disk_named', 'DROP VIEW IF EXISTS io_named',
                                     'DROP VIEW IF EXISTS waits_named', f'DROP TABLE "{table}"']
        if how == "view":
            return f"view for {table}", ['DROP VIEW IF EXISTS disk_named', 'DROP VIEW IF EXISTS io_named',
                                         'DROP VIEW IF EXISTS waits_named', f'DROP TABLE "{table}"',
                                         f'CREATE VIEW "{table}" AS {RECURSIVE}']
        if how == "trigger":
            return f"trigger on {table}", [f'CREATE TRIGGER t_{rnd.randrange(1000)} BEFORE DELETE ON "{table}" '
                                           'BEGIN SELECT 1; END']
        if how == "index":
            col = rnd.choice(columns[table])
            return f"index on {table}", [f'CREATE INDEX ix_{rnd.randrange(1000)} ON "{table}" ("{col}")']
        if how == "generated":  # hidden from PRAGMA table_info, evaluated by SELECT *
            return f"generated column in {table}", [f'ALTER TABLE "{table}" ADD COLUMN g_{rnd.randrange(1000)} '
                                                    "BLOB GENERATED ALWAYS AS (zeroblob(1000000)) VIRTUAL"]
        return f"empty {table}", [f'DELETE FROM "{table}"']
    table = rnd.choice(sorted(columns))
    col = rnd.choice(columns[table])
    v = rnd.choice(BAD_VALUES)
    share = rnd.choice([1, 2, 5, 50])
    where = "" if share == 1 else f" WHERE abs(random()) % {share} = 0"
    return f"{table}.{col} = {str(v)[:20]!r}", [(f'UPDATE OR IGNORE "{table}" SET "{col}" = ?{where}', (v,))]


# --- running every reader of a recording over one file -------------------------------------------

def exercise(path: Path, other: Path, out_dir: Path, capsys) -> list[str]:
    """Run info, export csv/json, diff in every format (both ways), report and a headless replay
    step over `path`, in process, through the CLI's own entry point. Each must end in output or one
    `pgio-tui: error:` line, with no raw control bytes on stdout; returns the error lines."""
    from pgio_tui.cli import main
    from pgio_tui.store.moments import find_moments
    from pgio_tui.store.player import Player
    from pgio_tui.store.reader import Recording, RecordingError
    from pgio_tui.tui.history import FrameHistory

    errors = []
    runs = [["info", str(path)], ["export", str(path), "--format", "csv"], ["export", str(path), "--format", "json"],
            *[["diff", str(other), str(path), "--format", f] for f in ("table", "markdown", "csv", "json")],
            ["diff", str(path), str(other), "--format", "table"],
            ["report", str(path), "-o", str(out_dir / "r.html")]]
    for argv in runs:
        code = main(argv)
        out, err = capsys.readouterr()
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, f"{argv[0]}: raw control bytes"
        if code:
            lines = err.strip().splitlines()
            assert code == 1 and len(lines) == 1 and lines[0].startswith("pgio-tui: error: "), (argv, err)
            assert "\x1b" not in err, "raw control bytes on stderr"
            errors.append(lines[0])
        elif argv[0] == "export" and argv[-1] == "json":
            import json
            for line in out.splitlines():
                json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    try:
        with Recording(path) as rec:
            player = Player(rec, playing=False)
            player.moments = find_moments(rec)
            history = FrameHistory()
            for _ in range(3):
                player.step(1)
                history.extend(rec.frames(player.tick, player.tick))
            player.next_moment()
            player.seek_time(rec.start_t + 30)
            history.extend(rec.frames(player.tick, player.tick + 2))
            rec.settings(player.tick), rec.workloads(), rec.checkpoints(), rec.metric_names()
            for w in rec.workloads():
                rec.workload_output(w["id"])
    except (RecordingError, ValueError) as e:  # ValueError: a recording without ticks, as `replay` says
        errors.append(str(e))
    return errors
