"""The server log the checkpoint tracker may trust: where it is read from and whose lines count.

Through SQL when logging_collector runs and the role may read it; else, on the database host, the
file itself (locallog). Either way only the checkpointer's lines count (serverlog); when that can't
be told, the log is not used and a note says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgio_tui import metrics as M
from pgio_tui.sources import locallog, pgfeatures, serverlog, slowlog
from pgio_tui.sources.postgres import PostgresSource

PID_HIDDEN = ("the checkpointer's PID is hidden (needs pg_monitor): its log lines cannot be told from "
              "a forged RAISE LOG, so checkpoint kinds and timings come from counters only")


@dataclass(slots=True)
class CheckpointLog:
    """The filter for the log lines of each tick, and whether the log is usable at all."""

    lines: serverlog.CheckpointerLines = field(default_factory=serverlog.CheckpointerLines)
    local_pid: int | None = None  # the checkpointer's PID from /proc when pg_stat_activity hides it
    trusted: bool = False

    def entries(self, log_lines: list[str], pid_from_sql: int | None) -> list[serverlog.Entry]:
        return self.lines.entries(log_lines, pid_from_sql or self.local_pid) if self.trusted else []


def find_local_log(pg: PostgresSource, settings: dict[str, str]) -> None:
    """No log through SQL, but we are on the database host: read the file itself if we may."""
    f = pg.features
    path = locallog.find_server_log(f.data_directory, pg.current_logfile(), settings.get("logging_collector") == "on")
    if path is None:
        return
    pg.local_log = locallog.LogTail(path)
    f.log_path = path
    f.notes[:] = [n for n in f.notes if n != pgfeatures.LOG_NOT_READABLE]


def slow_statements(pg: PostgresSource, settings: dict[str, str]) -> slowlog.SlowStatements | None:
    """The counter of `duration:` lines, when the log is readable and log_min_duration_statement
    is set (>= 0); else None (no figures, rather than zeros)."""
    if not (pg.features.logfile or pg.local_log is not None):
        return None
    try:
        min_ms = float(settings.get("log_min_duration_statement", "-1"))
    except ValueError:
        return None
    if min_ms < 0:
        return None
    return slowlog.SlowStatements(serverlog.log_format(pg.log_file), min_ms, M.LATENCY_THRESHOLDS_MS)


def checkpoint_log(pg: PostgresSource, settings: dict[str, str], on_host: bool) -> tuple[CheckpointLog, str | None]:
    """(the log's filter, why it can't be trusted or None). Without any log: untrusted, no note."""
    if not (pg.features.logfile or pg.local_log is not None):
        return CheckpointLog(), None
    log = CheckpointLog(serverlog.CheckpointerLines(serverlog.log_format(pg.log_file),
                                                    settings.get("log_line_prefix", "")))
    why = log.lines.why_not
    if why is None and log.lines.needs_pid() and pg.checkpointer_pid() is None:
        log.local_pid = locallog.checkpointer_pid(pg.features.data_directory) if on_host else None
        if log.local_pid is None:
            why = PID_HIDDEN
    log.trusted = why is None
    return log, why
