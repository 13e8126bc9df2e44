"""SessionInfo: what the header says and why a pane may be empty, for a live server or a recording.

Textual-free. Built from an opened Sampler (live) or a Recording (replay, snapshot tests), so the
panes never ask either one directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pgio_tui.interfaces import SamplerLike
from pgio_tui.naming import server_name
from pgio_tui.sources.checkpoint_rows import too_frequent
from pgio_tui.workload_facts import workload_progress

OS_NOTE = ("OS metrics only on the database host: run pgio-tui there, "
           "or grant pg_read_server_files to read the server's /proc")
REMOTE_OS_NOTE = ("OS metrics read remotely from the server's /proc through SQL: "
                  "coarser and dearer than running pgio-tui on the database host")
# What an empty pane says: short, so it fits a pane at 80 columns (the banner has the long reasons).
NO_PGSS = "latency needs pg_stat_statements, or a workload started here"
NO_MONITOR = "other roles' sessions are hidden: grant pg_monitor"
NO_OS = "no OS figures: run pgio-tui on the database host"


@dataclass
class SessionInfo:
    """What the header says about the session: live or replay, the server, the workload."""

    source: str = "live"  # live | replay
    host: str = ""
    port: str = ""
    dbname: str = ""
    server_version: str = ""
    interval: float = 1.0
    os_mode: str = "local"  # local | remote | none
    read_all_stats: bool = True
    pgss: bool = True
    pg_stat_io: bool = True
    notes: list[str] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    postmaster_start: float | None = None  # epoch seconds, for the uptime in the header

    client_host: str = ""  # the machine pgio-tui ran on (names a server reached by socket/loopback)

    @property
    def target(self) -> str:
        return server_name({"host": self.host, "port": self.port, "dbname": self.dbname,
                            "client_host": self.client_host})

    def note(self, *keywords: str) -> str | None:
        """The first note mentioning any keyword (case-insensitive)."""
        for n in self.notes:
            low = n.lower()
            if any(k.lower() in low for k in keywords):
                return n
        return None

    def why_no_os(self) -> str:
        if self.os_mode == "none":
            return NO_OS
        return "waiting for the second tick (rates need two samples)"

    def why_no_latency(self) -> str:
        if not self.pgss:
            return NO_PGSS
        return "no statements ran in this window"

    def why_no_waits(self) -> str:
        if not self.read_all_stats:
            return NO_MONITOR
        return "no session is waiting on anything right now"

    def setting_seconds(self, name: str) -> float | None:
        """A time setting in seconds ('300', '5min', '300s' all give 300)."""
        raw = self.settings.get(name)
        if raw is None:
            return None
        text = str(raw).strip()
        for suffix, mult in (("ms", 0.001), ("min", 60), ("s", 1), ("h", 3600), ("d", 86400)):
            if text.endswith(suffix):
                try:
                    return float(text[: -len(suffix)]) * mult
                except ValueError:
                    return None
        try:
            return float(text)
        except ValueError:
            return None

    def setting_float(self, name: str) -> float | None:
        try:
            return float(self.settings[name])
        except (KeyError, TypeError, ValueError):
            return None


def session_from_sampler(sampler: SamplerLike) -> SessionInfo:
    """From an opened Sampler (pgio_tui.sampler.Sampler)."""
    meta = sampler.meta()
    f = sampler.pg.features
    notes = list(f.notes)
    if sampler.os_mode == "none" and not any("OS metrics" in n for n in notes):
        notes.append(OS_NOTE)
    if sampler.os_mode == "remote":
        notes.append(REMOTE_OS_NOTE)
    return SessionInfo(
        source="live", host=str(meta.get("host") or ""), port=str(meta.get("port") or ""),
        client_host=str(meta.get("client_host") or ""),
        dbname=str(meta.get("dbname") or ""), server_version=str(meta.get("server_version") or ""),
        interval=float(sampler.interval), os_mode=sampler.os_mode,
        read_all_stats=f.read_all_stats, pgss=f.pgss_schema is not None,
        pg_stat_io=bool(f.io_cols), notes=notes, settings=dict(sampler.settings),
    )


def session_from_recording(rec: Any) -> SessionInfo:
    """From an open pgio_tui.store.reader.Recording: what was true when it was recorded."""
    meta = rec.meta
    feats = meta.get("features") or {}
    if not isinstance(feats, dict):
        feats = {}
    notes = list(feats.get("notes") or [])
    notes += [e.event.text for e in rec.events(["note"])  # a checkpoint warning is not a degradation (H),
              if e.event.text not in notes and too_frequent(e.event.text) is None  # nor a workload's progress
              and not workload_progress(e.event.text, e.event.data)]
    os_mode = str(meta.get("os_metrics") or "local")
    return SessionInfo(
        source="replay", host=str(meta.get("host") or ""), port=str(meta.get("port") or ""),
        client_host=str(meta.get("client_host") or ""),
        dbname=str(meta.get("dbname") or ""), server_version=str(meta.get("server_version") or ""),
        interval=float(meta.get("interval_s") or 1.0), os_mode=os_mode,
        read_all_stats=bool(feats.get("read_all_stats", True)), pgss=bool(feats.get("pg_stat_statements", True)),
        pg_stat_io=bool(feats.get("pg_stat_io", True)), notes=notes,
        settings={name: str(s.value) for name, s in rec.settings(rec.first_tick).items()},
    )
