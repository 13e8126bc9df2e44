"""One SQL statement run N times, each execution timed: the workload of experiments whose figure is
an elapsed time (the fsync × synchronous_commit bulk INSERT, timed in psql in the original).

`before` runs untimed ahead of every execution (a TRUNCATE, a CREATE TABLE IF NOT EXISTS), on the
same connection. The time of an execution is the client's wall clock around the statement, as psql's
\\timing gives it: round trip included, which is nothing next to a bulk statement.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.latency import buckets_of, frame_values, summarize


def _first_line(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    text = (diag.message_primary if diag is not None else None) or str(exc) or type(exc).__name__
    return text.splitlines()[0]


class SqlWorkload(Workload):
    kind = "sql"

    def __init__(self, conninfo: str, statement: str, *, times: int = 1, before: str | None = None):
        if not statement.strip():
            raise WorkloadError("sql: give the statement to time, e.g. sql 'INSERT INTO t SELECT ...'")
        if times < 1:
            raise WorkloadError("sql --times must be 1 or more")
        argv = ["sql", statement, f"--times={times}", *([f"--before={before}"] if before else [])]
        super().__init__(argv, {"statement": statement, "times": times, "before": before})
        self.conninfo = conninfo
        self.statement, self.times, self.before = statement, times, before
        self.elapsed_ms: list[float] = []
        self._pending: list[float] = []
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None

    def _run(self) -> None:
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True, application_name="pgio_sql", connect_timeout=10)
        except psycopg.Error as exc:
            raise WorkloadError(f"cannot connect: {_first_line(exc)}") from None
        self._conn = conn
        self.phase = "run"
        try:
            for i in range(1, self.times + 1):
                if self.stop_requested:
                    break
                self.progress = (i - 1) / self.times
                if self.before:
                    conn.execute(self.before)
                t0 = time.perf_counter()
                cur = conn.execute(self.statement)
                ms = (time.perf_counter() - t0) * 1000.0
                with self._lock:
                    self.elapsed_ms.append(ms)
                    self._pending.append(ms)
                self.emit("stdout", f"execution {i}/{self.times}: {ms:.3f} ms" +
                          (f" ({cur.statusmessage})" if cur.statusmessage else ""))
            self.progress = 1.0
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.errors.QueryCanceled) and self.stop_requested:
                self.emit("note", "statement cancelled (stop requested)")
                self.exit_code = 130
            else:
                raise WorkloadError(_first_line(exc)) from None
        finally:
            self._conn = None
            conn.close()
            self.summary = self._summary()
            if self.stop_requested and self.exit_code is None:
                self.exit_code = 130

    def _request_stop(self) -> None:
        conn = self._conn
        if conn is not None:
            try:
                conn.cancel_safe(timeout=5)
            except Exception:  # noqa: BLE001 - closed meanwhile: nothing to cancel
                pass

    def _summary(self) -> dict[str, Any]:
        with self._lock:
            ms = list(self.elapsed_ms)
        stats = summarize(ms)
        return {"executions": len(ms), "times": self.times, "elapsed_ms": [round(x, 3) for x in ms],
                "elapsed_s_total": round(sum(ms) / 1000.0, 3), "stopped": self.stop_requested,
                "latency": stats.as_dict()}

    def partial_summary(self) -> dict[str, Any] | None:
        return self._summary()

    def _tick_values(self, frame: Frame, finished: bool) -> None:
        with self._lock:
            lat, self._pending = self._pending, []
        if lat:
            frame.values.update(frame_values(summarize(lat), frame.dt))
            frame.latency_buckets = buckets_of(lat)
        elif frame.dt:  # no execution ended this tick: none per second, not the server's commit rate
            frame.values.update({M.LATENCY_TPS: 0.0, M.LATENCY_TXNS: 0})

    def report_lines(self) -> list[str]:
        s = self.summary or self._summary()
        lines = [f"sql: {s['executions']} of {s['times']} executions, {s['elapsed_s_total']:.3f} s in all"]
        lat = s["latency"]
        if s["executions"]:
            lines.append(f"elapsed per execution: mean {lat['mean_ms']:.3f} ms, stddev {lat['stddev_ms']:.3f} ms, "
                         f"max {lat['max_ms']:.3f} ms")
        return lines
