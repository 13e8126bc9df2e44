"""What a pgio run reports: each session's totals, the run's summary and pgio's console lines.

Apart from the workload, which runs the sessions; these only turn finished counts into figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pgio_tui.sources.disks import parse_diskstats
from pgio_tui.sources.procfs import LOCAL
from pgio_tui.workloads.pgio_sql import DB_STATS

if TYPE_CHECKING:
    from pgio_tui.workloads.pgio import PgioWorkload


@dataclass(slots=True)
class SessionTotals:
    """One session's run, as pgio's per-session detail (its pgio_return row) plus ours."""

    table: str
    pid: int | None = None
    slices: int = 0
    selects: int = 0
    updates: int = 0
    select_max_ms: float = 0.0
    update_max_ms: float = 0.0
    blks_read: int = 0
    blks_hit: int = 0
    tuples: int = 0  # rows its statements fetched from its table (selects' and updates' scans)
    deadlocks: int = 0
    cancelled: int = 0
    error: str | None = None


def run_summary(w: PgioWorkload, before, after, disk_a, disk_b, shared_buffers) -> dict[str, Any]:
    """The finished run's summary: pg_stat_database deltas over the true run time plus the sessions' own counts."""
    c = w.config
    run_s = w.run_s or 0.0
    d = {k: (after[k] - before[k]) if after[k] is not None and before[k] is not None else None for k in DB_STATS}
    per_s = (lambda x: x / run_s if run_s and x is not None else None)
    selects = sum(s.selects for s in w.sessions)
    updates = sum(s.updates for s in w.sessions)
    reads = sum(s.blks_read for s in w.sessions)
    tuples = sum(s.tuples for s in w.sessions)
    summary: dict[str, Any] = {
        "dbname": w.dbname, "schemas": c.schemas, "sessions_per_table": c.sessions,
        "scale_blocks": c.scale, "shared_buffers": shared_buffers,
        "run_s": round(run_s, 3), "run_s_whole": int(run_s),
        "run_start_t": w.run_start_t, "run_end_t": w.run_end_t,
        "riops": per_s(d["blks_read"]), "cache_hits_s": per_s(d["blks_hit"]),
        "blks_read": d["blks_read"], "blks_hit": d["blks_hit"],
        "tup_returned": d["tup_returned"], "tup_fetched": d["tup_fetched"], "tup_updated": d["tup_updated"],
        "deadlocks": sum(s.deadlocks for s in w.sessions), "db_deadlocks": d["deadlocks"],
        "ms_per_read": (d["blk_read_time"] / d["blks_read"]) if d["blk_read_time"] and d["blks_read"] else None,
        "selects": selects, "updates": updates, "statements_s": per_s(selects + updates),
        "select_blocks_nominal": selects * c.work_unit, "update_blocks_nominal": updates * c.update_work_unit,
        "pgio_reads": reads, "pgio_reads_s": per_s(reads),
        "pgio_hits": sum(s.blks_hit for s in w.sessions),
        "pgio_tuples": tuples, "pgio_tuples_s": per_s(tuples),
        "stopped": w.stop_requested, "before": before, "after": after,
        "latency": w.latency_stats(),
        "sessions": [asdict(s) for s in w.sessions],
    }
    if disk_a and disk_b:
        ios = {dev: disk_b[dev] - disk_a[dev] for dev in disk_a if dev in disk_b}
        summary["physical_reads"] = ios
        summary["physical_read_iops"] = {dev: per_s(n) for dev, n in ios.items()}
    return summary


def console_report(w: PgioWorkload, before, after) -> list[str]:
    """pgio's console report: BEFORE/AFTER rows and the classic result line (true run time)."""
    s = w.summary
    assert s is not None, "the report of a run that has its summary"
    cols = ("blks_hit", "blks_read", "tup_returned", "tup_fetched", "tup_updated")
    lines = ["pg_stat_database stats:", "          datname | " + " | ".join(cols)]
    for label, row in (("BEFORE", before), ("AFTER", after)):
        lines.append(f"{label}:  {w.dbname} | " + " | ".join(str(row[k]) for k in cols))
    lines.append(f"DBNAME:  {w.dbname}. {w.config.schemas} schemas, {w.config.sessions} "
                 f"threads(each). Run time: {s['run_s_whole']} seconds. RIOPS >{int(s['riops'] or 0)}< "
                 f"CACHE_HITS/s >{int(s['cache_hits_s'] or 0)}<")
    lines.append(f"true run time {s['run_s']:.3f} s; statements/s {s['statements_s'] or 0:.1f}; "
                 f"reads by pgio statements/s {s['pgio_reads_s'] or 0:.0f}; "
                 f"rows fetched by pgio statements/s {s['pgio_tuples_s'] or 0:.0f}; deadlocks {s['deadlocks']}")
    for dev, iops in (s.get("physical_read_iops") or {}).items():
        lines.append(f"physical read IOPS ({dev}, /proc/diskstats): {iops:.0f}")
    lines.append("session detail: table pid slices selects updates select_max_ms update_max_ms "
                 "blks_read blks_hit tuples deadlocks")
    for x in w.sessions:
        lines.append(f"  {x.table} {x.pid} {x.slices} {x.selects} {x.updates} {x.select_max_ms:.3f} "
                     f"{x.update_max_ms:.3f} {x.blks_read} {x.blks_hit} {x.tuples} {x.deadlocks}")
    return lines


def read_disks(devices: list[str]) -> dict[str, int]:
    """Reads completed per device, from the local /proc/diskstats."""
    if not devices:
        return {}
    stats = parse_diskstats(LOCAL.read("/proc/diskstats") or "")
    return {d: stats[d].rd_ios for d in devices if d in stats}
