"""pgbench launched by pgio-tui: its progress lines, per-transaction log and summary, per tick.

pgbench runs with `-P 1` and a per-transaction log (`-l`) in a temporary directory; the user's
arguments pass through unchanged, as an argv list (never a shell), and the connection goes in
libpq's PG* environment variables so no password shows in a process list. Each tick counts every
logged transaction once, in the first tick at or after its end time at which it has been read
(pgbench writes its log through stdio buffers, so lines arrive in chunks of about 4 kB); the run's
totals are therefore exact. Formats are those of PostgreSQL 13-18 (fixtures in tests/data/pgbench).

pgbench has no SIGINT handler: a stopped pgbench prints no summary and loses its last unflushed log
chunk. Stopping still sends SIGINT (what a user at a terminal does); the summary is then built from
what was measured, and says so.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pgio_tui import metrics as M
from pgio_tui.frame import Frame
from pgio_tui.workload_facts import PGBENCH_INIT_DONE
from pgio_tui.workloads import watchdog
from pgio_tui.workloads.base import Workload, WorkloadError
from pgio_tui.workloads.latency import Histogram, buckets_of, combine, frame_values, summarize
from pgio_tui.workloads.pgbench_invocation import connection, find_pgbench, has_database_arg, has_option, option_value
from pgio_tui.workloads.pgbench_output import (LogEntry, Progress, error_line, init_percent, parse_log_line,
                                               parse_progress, parse_summary)

# ------------------------------------------------------------------------------- the workload


_live: dict[int, subprocess.Popen] = {}  # pgbench processes running now
_workdirs: set[Path] = set()  # temporary log directories not yet removed


@atexit.register
def _stop_at_exit() -> None:
    """pgbench runs in its own session (our terminal's Ctrl-C is ours to forward): end it with us."""
    for proc in list(_live.values()):
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(2)
        except subprocess.TimeoutExpired:
            proc.kill()
        except OSError:
            pass
    for d in list(_workdirs):
        shutil.rmtree(d, ignore_errors=True)


class _LogTail:
    """Reads new complete lines from the per-transaction log files (one per pgbench thread)."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self._files: dict[str, tuple[int, bytes]] = {}  # path -> (offset, partial line)

    def read(self, pid: int | None) -> list[str]:
        if pid is None:
            return []
        lines: list[str] = []
        for path in sorted(glob.glob(f"{glob.escape(self.prefix)}.{pid}") +
                           glob.glob(f"{glob.escape(self.prefix)}.{pid}.*")):
            offset, rest = self._files.get(path, (0, b""))
            try:
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                continue
            if not data:
                continue
            chunk = rest + data
            complete, _, partial = chunk.rpartition(b"\n")
            self._files[path] = (offset + len(data), partial)
            if complete:
                lines += complete.decode(errors="replace").split("\n")
        return lines


class PgbenchWorkload(Workload):
    """pgbench (optionally after `pgbench -i -s N`) with per-tick latency from its transaction log."""

    kind = "pgbench"

    @property
    def setup_label(self) -> str:
        return f"pgbench -i -s {self.init_argv[3]}" if self.init_argv else ""

    def is_progress_line(self, line: str) -> bool:
        return self.init_argv is not None and init_percent(line) is not None

    def __init__(self, conninfo: str, args: list[str], *, init_scale: int | None = None,
                 sampling_rate: float | None = None, pgbench: str | os.PathLike | None = None):
        args = list(args)
        if args[:1] == ["--"]:
            args = args[1:]
        if sampling_rate is not None and not 0 < sampling_rate <= 1:
            raise WorkloadError(f"--sampling-rate {sampling_rate} is out of range: give a fraction in (0, 1]")
        if init_scale is not None and init_scale < 1:
            raise WorkloadError("--init-scale must be 1 or more")
        self.pgbench = str(pgbench or find_pgbench())
        # The user's PG* variables (PGPASSWORD, ...) still apply; the conninfo's keywords win.
        env, conn_args = connection(conninfo)
        if conn_args and has_database_arg(args):
            raise WorkloadError("pgbench connects where pgio-tui does: give the database as CONN or -d, "
                                "not among pgbench's arguments after --")
        self.env = {**os.environ, **env, "LC_ALL": "C", "LANG": "C"}
        self.cwd = os.getcwd()  # relative paths in the user's arguments (-f script.sql) mean what they say
        self.init_only = has_option(args, "i", "--initialize")
        self.workdir = Path(tempfile.mkdtemp(prefix="pgio-tui-pgbench-"))
        _workdirs.add(self.workdir)
        watchdog.adopt(self.workdir)  # a lab's watchdog removes it if we are killed (demo runs for a year)
        added: list[str] = []
        if not self.init_only and not has_option(args, "P", "--progress"):
            added += ["-P", "1"]
        self.own_log = False
        self.log_prefix: str | None = None
        if not self.init_only and not has_option(args, None, "--aggregate-interval"):
            user_prefix = option_value(args, None, "--log-prefix")
            if has_option(args, "l", "--log"):
                self.log_prefix = os.path.abspath(user_prefix or "pgbench_log")
            else:
                self.log_prefix = str(self.workdir / "pgbench_log")
                self.own_log = True
                added += ["-l", f"--log-prefix={self.log_prefix}"]
                if sampling_rate is not None and sampling_rate < 1:
                    added += [f"--sampling-rate={sampling_rate}"]
        user_rate = option_value(args, None, "--sampling-rate")
        if user_rate:
            self.sampling_rate = float(user_rate)
        elif self.own_log and sampling_rate is not None:
            self.sampling_rate = sampling_rate
        else:
            self.sampling_rate = 1.0
        argv = [self.pgbench, *added, *args, *conn_args]
        self.init_argv = [self.pgbench, "-i", "-s", str(init_scale), *conn_args] if init_scale else None
        params = {"init_scale": init_scale, "sampling_rate": self.sampling_rate, "user_args": args,
                  "added_args": added, "per_transaction_log": self.log_prefix is not None,
                  "init_argv": self.init_argv}
        super().__init__(argv, params)
        self._proc: subprocess.Popen | None = None
        self._run_pid: int | None = None
        self._tail = _LogTail(self.log_prefix) if self.log_prefix else None
        self._lock = threading.Lock()  # log reading and the pending entries
        self._pending: list[LogEntry] = []  # read, not yet given to a tick
        self._progress_pending: list[Progress] = []
        self.last_progress: Progress | None = None
        self._run_hist = Histogram()
        self._run_counts = {"ok": 0, "failed": 0, "skipped": 0}
        self._first_start: float | None = None  # the benchmark's window, from its log
        self._last_end: float | None = None
        self._stdout: list[str] = []
        self._run_start_t: float | None = None
        self._run_end_t: float | None = None
        self.version: str | None = None

    # -- running ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            if self.init_argv:
                self.phase, self.progress = "setup", 0.0
                rc = self._launch(self.init_argv, init=True)
                if self.stop_requested:
                    self.exit_code = 130
                    raise WorkloadError("pgbench -i interrupted: the pgbench tables may be incomplete; "
                                        "run again with --init-scale to rebuild them")
                if rc != 0:
                    self.exit_code = rc
                    raise WorkloadError(f"pgbench -i failed (exit status {rc}): {self._last_error_line()}")
                self.event("note", PGBENCH_INIT_DONE)
            if self.stop_requested:
                self.exit_code = 130
                return
            self.phase, self.progress = "run", None
            self._run_start_t = time.time()
            rc = self._launch(self.argv, init=False)
            self._run_end_t = time.time()
            self.exit_code = rc
            self._collect()
            with self._lock:
                self.summary = self._make_summary(rc)
            if rc != 0 and not self.stop_requested:
                raise WorkloadError(f"pgbench exited with status {rc}: {self._last_error_line()}")
        finally:
            self._remove_workdir()  # our log, read to the end by now

    def _remove_workdir(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)
        _workdirs.discard(self.workdir)

    def _launch(self, argv: list[str], init: bool) -> int:
        """Run one pgbench to its end, streaming its output; returns its exit status."""
        try:
            proc = subprocess.Popen(argv, env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise WorkloadError(f"cannot run {argv[0]}: {exc.strerror}") from None
        self._proc = proc
        _live[proc.pid] = proc
        if not init:
            self._run_pid = proc.pid
        readers = [threading.Thread(target=self._read_stream, args=(proc.stdout, "stdout", init), daemon=True),
                   threading.Thread(target=self._read_stream, args=(proc.stderr, "stderr", init), daemon=True)]
        for r in readers:
            r.start()
        if self.stop_requested:  # stop() came before the process existed
            self._signal(signal.SIGINT)
        rc = proc.wait()
        _live.pop(proc.pid, None)
        for r in readers:
            r.join()
        return 128 - rc if rc < 0 else rc  # killed by signal N: 128 + N, as a shell reports it

    def _read_stream(self, stream, name: str, init: bool) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            self.emit(name, line)
            if name == "stdout" and not init:
                self._stdout.append(line)
            if init:
                pct = init_percent(line)
                if pct is not None:
                    self.progress = pct
                continue
            p = parse_progress(line)
            if p is not None:
                with self._lock:
                    self.last_progress = p
                    self._progress_pending.append(p)
        stream.close()

    def _request_stop(self) -> None:
        self._signal(signal.SIGINT)

    def stop(self) -> None:
        if self.started_t is None:  # never started: only the empty log directory to remove
            self._remove_workdir()
            return
        super().stop()

    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """Last resort when a stopped pgbench does not end."""
        self._signal(signal.SIGKILL)

    def _last_error_line(self) -> str:
        _, lines = self.read_output(0)
        return error_line([line for _t, stream, line in lines[-200:] if stream == "stderr"])

    # -- the log ------------------------------------------------------------------------------

    def _collect(self) -> None:
        """Read new log lines into the pending list and the run totals."""
        if self._tail is None:
            return
        with self._lock:
            for line in self._tail.read(self._run_pid):
                entry = parse_log_line(line)
                if entry is None:
                    continue
                self._pending.append(entry)
                self._run_counts[entry.status] += 1
                if entry.latency_ms is not None:
                    self._run_hist.add(entry.latency_ms)
                began = entry.end_t - (entry.latency_ms or 0.0) / 1000.0
                if self._first_start is None or began < self._first_start:
                    self._first_start = began
                if self._last_end is None or entry.end_t > self._last_end:
                    self._last_end = entry.end_t

    def _tick_values(self, frame: Frame, finished: bool) -> None:
        if self._run_pid is None:  # not benchmarking yet (init, or never got there)
            return
        self._collect()
        with self._lock:
            if self._tail is not None:
                cutoff = float("inf") if finished else frame.t
                taken = [e for e in self._pending if e.end_t <= cutoff]
                self._pending = [e for e in self._pending if e.end_t > cutoff]
                self._progress_pending.clear()
                latencies = [e.latency_ms for e in taken if e.latency_ms is not None]
                stats = summarize(latencies)
                frame.latency_buckets = buckets_of(latencies)
                failed = sum(1 for e in taken if e.status == "failed")
                frame.values.update(frame_values(stats, frame.dt, 1.0 / self.sampling_rate, failed))
            else:  # no per-transaction log: pgbench's own per-second figures
                parts = self._progress_pending
                self._progress_pending = []
                if parts:
                    n, mean, sd = combine((p.tps, p.lat_ms, p.stddev_ms) for p in parts)
                    frame.values.update({M.LATENCY_TPS: sum(p.tps for p in parts) / len(parts),
                                         M.LATENCY_MEAN_MS: mean, M.LATENCY_STDDEV_MS: sd})

    # -- summary ------------------------------------------------------------------------------

    def _make_summary(self, rc: int | None) -> dict[str, Any]:
        own = parse_summary(self._stdout)
        self.version = own.get("version")
        measured = self._run_hist.stats().as_dict("latency_")
        measured["transactions"] = self._run_counts["ok"]
        measured["failed"] = self._run_counts["failed"]
        measured["skipped"] = self._run_counts["skipped"]
        measured["sampling_rate"] = self.sampling_rate
        run_s = (self._run_end_t or time.time()) - (self._run_start_t or time.time())
        measured["run_s"] = round(run_s, 3)  # pgbench's process, start to exit (connections, vacuum included)
        # The benchmark itself: first transaction's start to last one's end, as the log has them.
        first, last = self._first_start, self._last_end
        window = (last - first) if first is not None and last is not None else None
        measured["window_s"] = round(window, 3) if window else None
        measured["tps"] = round(self._run_counts["ok"] / self.sampling_rate / window, 3) if window else None
        summary: dict[str, Any] = {"exit_code": rc, "interrupted": self.stop_requested,
                                   "run_start_t": self._run_start_t, "run_end_t": self._run_end_t}
        if own:
            summary.update(own)
            summary["source"] = "pgbench"
        else:
            summary["source"] = "pgio-tui"
            summary["note"] = ("pgbench printed no summary (it prints none when interrupted): figures are "
                               "from its per-transaction log, whose last unflushed ~4 kB may be missing")
            if self.last_progress is not None:
                summary["last_progress_s"] = self.last_progress.t
        if self._tail is not None:
            summary["measured"] = measured
        return summary

    def partial_summary(self) -> dict[str, Any] | None:
        if self._run_pid is None:
            return None
        self._collect()
        with self._lock:
            summary = self._make_summary(None)
        summary.update(partial=True, note="the recording ended while pgbench was running: figures so far, "
                                          "from its per-transaction log")
        return summary

    def report_lines(self) -> list[str]:
        return list(self._stdout)

    def describe(self) -> str:
        """The user's command: pgio-tui's own -P 1 -l --log-prefix are not the user's business."""
        import shlex
        return shlex.join(["pgbench", *self.params["user_args"]])

    def outcome(self) -> str:
        s = self.summary or {}
        if self.error:
            return f"failed: {self.error}"
        if s.get("tps") is not None:
            return f"{s.get('transactions')} transactions, tps {s['tps']:.1f}, latency avg {s.get('latency_avg_ms')} ms"
        m = s.get("measured") or {}
        if m.get("transactions"):
            return f"stopped: {m['transactions']} transactions logged, latency avg {m.get('latency_mean_ms')} ms"
        return super().outcome()
