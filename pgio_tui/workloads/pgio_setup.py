"""pgio's tables: the seed table in random physical order and its copies pgio1..pgioN.

Fillfactor 10 gives each ~1 kB row its own 8 kB block, so a key range of WORK_UNIT visits that
many random blocks. Tables are loaded in parallel (one loader per session, at most one per table)
and a stop cancels the load; a run checks the tables match --scale before it starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg
from psycopg import errors, sql

from pgio_tui.sources.postgres import one_row, scalar
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.pgio_config import BLOCK, PgioConfig


PROGRESS_NOTE = "setup: "  # how the lines saying how far the load is begin


class PgioTables(Workload):
    """Set-up and checks of pgio's tables, for PgioWorkload (its config, emit and connections)."""

    setup_label = "pgio tables"
    config: PgioConfig  # what PgioWorkload gives it
    dbname: str
    _connect: Callable[[str], psycopg.Connection]  # a connection named for pg_stat_activity
    _release: Callable[[psycopg.Connection], None]

    def is_progress_line(self, line: str) -> bool:
        return line.startswith(PROGRESS_NOTE)

    def _tables(self) -> list[str]:
        return [f"pgio{i}" for i in range(1, self.config.schemas + 1)]

    def _setup(self, admin: psycopg.Connection) -> None:
        c = self.config
        t0 = time.monotonic()
        self.progress = 0.0
        self.emit("note", f"Job info: Loading {c.scale} blocks ({c.scale * BLOCK / 2**20:.0f} MB) into "
                          f"{c.schemas} table(s) of database {self.dbname}")
        have = scalar(admin, "SELECT to_regclass('pgio_base') IS NOT NULL")
        rows = scalar(admin, "SELECT count(*) FROM pgio_base") if have else None
        if rows != c.scale:
            admin.execute("DROP TABLE IF EXISTS pgio_base")
            admin.execute("CREATE TABLE pgio_base (mykey bigint, scratch bigint, filler char(1024))")
            admin.execute("INSERT INTO pgio_base SELECT g, trunc(random() * 1000000000), repeat('X', 1024) "
                          "FROM generate_series(1, %s) AS g ORDER BY 2", [c.scale])  # random physical order
            self.emit("note", f"Base table loading time: {time.monotonic() - t0:.1f} seconds.")
        else:
            self.emit("note", "Base table pgio_base reused (right row count).")
        old = [r[0] for r in admin.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace "
            "AND c.relkind IN ('r', 'p') AND c.relname ~ '^pgio[0-9]+$'").fetchall()]
        for name in old:
            admin.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
        tables = self._tables()
        workers = max(1, min(c.sessions, len(tables)))
        self.emit("note", f"Batching info: loading {len(tables)} table(s) with {workers} loader(s)")
        todo = list(tables)
        todo_lock = threading.Lock()
        errors_seen: list[str] = []

        def loader() -> None:
            try:
                conn = self._connect("pgio_setup")
            except WorkloadError as exc:
                errors_seen.append(str(exc))
                return
            try:
                while not self.stop_requested:
                    with todo_lock:
                        if not todo:
                            return
                        name = todo.pop(0)
                    self._load_table(conn, name)
            except psycopg.Error as exc:
                if not self.stop_requested:
                    errors_seen.append(first_line(exc))
            finally:
                self._release(conn)

        threads = [threading.Thread(target=loader, daemon=True) for _ in range(workers)]
        for t in threads:
            t.start()
        expected = len(tables) * c.scale * BLOCK
        last_note = time.monotonic()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(0.5)
            if self.stop_requested:
                continue
            try:
                size = scalar(admin, "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c "
                              "WHERE c.relname = ANY(%s) AND c.relkind = 'r'", [tables])
            except psycopg.Error:
                continue
            self.progress = min(0.99, size / expected)
            if time.monotonic() - last_note >= 2:
                last_note = time.monotonic()
                self.emit("note", f"{PROGRESS_NOTE}{self.progress:.0%} loaded ({size / 2**20:.0f} of "
                                  f"{expected / 2**20:.0f} MB), {last_note - t0:.1f} s")
        if self.stop_requested:
            raise errors.QueryCanceled("setup cancelled")
        if errors_seen:
            raise WorkloadError(f"setup failed: {errors_seen[0]}")
        for name in tables:
            heap, index = one_row(admin.execute(
                "SELECT pg_relation_size(%s::regclass), pg_relation_size(%s::regclass)", [name, f"{name}_idx"]))
            self.emit("note", f"{name}: table {heap / 2**20:.1f} MB ({heap // BLOCK} blocks), "
                              f"index {index / 2**10:.0f} kB")
        self.progress = 1.0
        self.emit("note", f"Group data loading phase complete. Elapsed: {time.monotonic() - t0:.1f} seconds.")

    def _load_table(self, conn: psycopg.Connection, name: str) -> None:
        """One table: fillfactor 10 so each ~1 kB row gets its own block; index after the load."""
        t, idx = sql.Identifier(name), sql.Identifier(f"{name}_idx")
        conn.execute(sql.SQL("CREATE TABLE {} (mykey bigint, scratch bigint, filler char(1024)) "
                             "WITH (fillfactor = 10)").format(t))
        conn.execute(sql.SQL("INSERT INTO {} SELECT mykey, scratch, filler FROM pgio_base").format(t))
        conn.execute(sql.SQL("CREATE INDEX {} ON {} (mykey)").format(idx, t))
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(t))  # hint bits set now, not by the first reads

    def _check_tables(self, admin: psycopg.Connection) -> None:
        c = self.config
        for name in self._tables():
            row = one_row(admin.execute("SELECT to_regclass(%s), to_regclass(%s)", [name, f"{name}_idx"]))
            if row[0] is None or row[1] is None:
                raise WorkloadError(f"no pgio table {name} (or its index) in database {self.dbname}: run with "
                                    f"--setup first (pgio-tui bench pgio --setup --scale {c.scale} "
                                    f"--schemas {c.schemas})")
            blocks = scalar(admin, "SELECT pg_relation_size(%s::regclass) / %s", [name, BLOCK])
            if abs(blocks - c.scale) > max(8, c.scale // 100):
                raise WorkloadError(f"{name} has {blocks} blocks but --scale is {c.scale}: give the scale used "
                                    f"at setup, or run with --setup")


def first_line(exc: BaseException) -> str:
    """A database error in one line: the server's primary message when there is one."""
    diag = getattr(exc, "diag", None)
    msg = (getattr(diag, "message_primary", None) or str(exc) or type(exc).__name__).strip()
    return msg.splitlines()[0]
