"""pgbench's output as data: its progress lines, per-transaction log lines and end-of-run summary (13-18).

Pure parsers, apart from the process handling, so they are tested line by line on captured output
(tests/data/pgbench).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# 13/14: `progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f[, lag %.3f ms[, %lld skipped]]`
# 15-18: `... stddev %.3f, %lld failed[, lag %.3f ms[, %lld skipped]][, %lld retried, %lld retries]`
# With --progress-timestamp the time is a Unix epoch with 3 decimals.
PROGRESS = re.compile(
    r"^progress: (?P<t>[\d.]+) s, (?P<tps>[\d.]+|nan|-?inf) tps, lat (?P<lat>[\d.]+|nan) ms "
    r"stddev (?P<stddev>[\d.]+|nan)(?:, (?P<failed>\d+) failed)?(?:, lag (?P<lag>[\d.]+) ms)?"
    r"(?:, (?P<skipped>\d+) skipped)?(?:, (?P<retried>\d+) retried, (?P<retries>\d+) retries)?\s*$")

# pgbench -i: `100000 of 100000 tuples (100%) done (elapsed ...)`; 18 adds `of pgbench_accounts`.
INIT_PROGRESS = re.compile(r"^(\d+) of (\d+) tuples \((\d+)%\)")

# Tokens in the latency column that are not a latency.
NOT_A_LATENCY = {"skipped": "skipped", "failed": "failed", "serialization": "failed", "deadlock": "failed"}


@dataclass(slots=True, frozen=True)
class Progress:
    t: float
    tps: float
    lat_ms: float
    stddev_ms: float
    failed: int | None = None
    lag_ms: float | None = None
    skipped: int | None = None
    retried: int | None = None
    retries: int | None = None


def parse_progress(line: str) -> Progress | None:
    """A `-P` progress line (13-18 formats), or None for any other line."""
    m = PROGRESS.match(line)
    if not m:
        return None
    g = m.groupdict()

    def num(key, cast=float):
        return None if g[key] is None else cast(g[key])

    return Progress(float(g["t"]), float(g["tps"]), float(g["lat"]), float(g["stddev"]), num("failed", int),
                    num("lag"), num("skipped", int), num("retried", int), num("retries", int))


@dataclass(slots=True, frozen=True)
class LogEntry:
    """One line of the per-transaction log."""

    client: int
    end_t: float  # Unix epoch seconds when the transaction ended
    latency_ms: float | None  # None for skipped / failed
    status: str  # ok, skipped, failed
    lag_ms: float | None = None
    retries: int | None = None


def parse_log_line(line: str) -> LogEntry | None:
    """`client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`.

    13/14 and 15-18 share the first six columns; 15+ may add retries (--max-tries != 1) and puts
    `failed` (or `serialization`/`deadlock`) where the latency goes. Returns None for a line that
    is not one (e.g. a truncated last line).
    """
    parts = line.split()
    if not 6 <= len(parts) <= 8:
        return None
    try:
        client = int(parts[0])
        end_t = int(parts[4]) + int(parts[5]) / 1e6
        tok = parts[2]
        if tok.isdigit():
            latency, status = int(tok) / 1000.0, "ok"
        elif tok in NOT_A_LATENCY:
            latency, status = None, NOT_A_LATENCY[tok]
        else:
            return None
        lag = int(parts[6]) / 1000.0 if len(parts) >= 7 else None
        retries = int(parts[7]) if len(parts) == 8 else None
    except ValueError:
        return None
    return LogEntry(client, end_t, latency, status, lag, retries)


_SUMMARY_LINES: tuple[tuple[str, re.Pattern, tuple], ...] = tuple(
    (key, re.compile(rx), casts) for key, rx, casts in (
        ("version", r"^pgbench \((.+?)(?:, server (.+))?\)$", (str, str)),
        ("transaction_type", r"^transaction type: (.+)$", (str,)),
        ("scaling_factor", r"^scaling factor: (\d+)$", (int,)),
        ("partition_method", r"^partition method: (\S+)$", (str,)),
        ("partitions", r"^partitions: (\d+)$", (int,)),
        ("query_mode", r"^query mode: (\S+)$", (str,)),
        ("clients", r"^number of clients: (\d+)$", (int,)),
        ("threads", r"^number of threads: (\d+)$", (int,)),
        ("max_tries", r"^maximum number of tries: (\d+)$", (int,)),
        ("transactions_per_client", r"^number of transactions per client: (\d+)$", (int,)),
        ("duration_s", r"^duration: (\d+) s$", (int,)),
        ("transactions", r"^number of transactions actually processed: (\d+)(?:/(\d+))?$", (int, int)),
        ("failed", r"^number of failed transactions: (\d+) \(([\d.]+)%\)$", (int, float)),
        ("serialization_failures", r"^number of serialization failures: (\d+)", (int,)),
        ("deadlock_failures", r"^number of deadlock failures: (\d+)", (int,)),
        ("retried", r"^number of transactions retried: (\d+)", (int,)),
        ("retries", r"^total number of retries: (\d+)$", (int,)),
        ("skipped", r"^number of transactions skipped: (\d+)", (int,)),
        ("latency_avg_ms", r"^latency average = ([\d.]+) ms", (float,)),
        ("latency_stddev_ms", r"^latency stddev = ([\d.]+) ms$", (float,)),
        ("lag_avg_ms", r"^rate limit schedule lag: avg ([\d.]+) \(max ([\d.]+)\) ms$", (float, float)),
        ("initial_connection_ms", r"^initial connection time = ([\d.]+) ms$", (float,)),
        ("average_connection_ms", r"^average connection time = ([\d.]+) ms$", (float,)),
        ("tps", r"^tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing"
                r"|including reconnection times)\)$", (float,)),
        ("tps_including_connections", r"^tps = ([\d.]+) \(including connections establishing\)$", (float,)),
    ))
# Second captures, named.
_SECOND = {"version": "server_version", "transactions": "transactions_planned", "failed": "failed_pct",
           "lag_avg_ms": "lag_max_ms"}


def parse_summary(lines: list[str]) -> dict[str, Any]:
    """pgbench's end-of-run report (stdout, 13-18) as a dict; {} when there is none."""
    out: dict[str, Any] = {}
    for line in lines:
        line = line.strip()
        for key, rx, casts in _SUMMARY_LINES:
            m = rx.match(line)
            if not m:
                continue
            out[key] = casts[0](m.group(1))
            if len(casts) > 1 and m.group(2) is not None:
                out[_SECOND[key]] = casts[1](m.group(2))
            break
    return out if "transactions" in out or "tps" in out else {}


def error_line(stderr: list[str]) -> str:
    """The line of pgbench's stderr that says what went wrong (not the hint after it)."""
    lines = [re.sub(r"^\S*/pgbench: ", "pgbench: ", x.strip()) for x in stderr if x.strip()]
    lines = [x for x in lines if not x.startswith(("progress:", "pgbench: hint:", "pgbench: detail:"))]
    for x in lines:
        if re.search(r"error|unrecognized|invalid|fatal", x, re.I):
            return x
    return lines[-1] if lines else "no message"


def init_percent(line: str) -> float | None:
    m = INIT_PROGRESS.match(line)
    return int(m.group(3)) / 100.0 if m else None
