"""Our metric catalog under Prometheus names: the one mapping shared by the live /metrics endpoint
and `export --format openmetrics`, so a backfilled recording and a scrape give the same series.
Made from each catalog entry's `prom` (name, type, help, labels) and its unit's `to_base`
(pgio_tui/metrics.py); only the series of no single metric (checkpoint kind, waits, up, device roles)
are here.

Prometheus conventions: a `pgio_` prefix, base units (seconds, bytes, ratios 0-1), counts of things
named by the thing (`_buffers`, `_blocks`), `_total` counters for cumulative quantities so rate() and
increase() work, gauges for levels and states. Frames carry per-second rates; `Converter` turns them
back into totals (rate x dt, summed since the exporter or the recording started), so
rate(pgio_wal_bytes_total[1m]) is the WAL rate the TUI shows, averaged over the minute. Labels are
bounded, each one value: server, device, role, backend_type and wait event names (PostgreSQL's fixed
list). Never query text. A device's roles (data, wal, tblspc: one device can hold several; `none`: a
disk PostgreSQL does not use) are a series each of `pgio_disk_role_info`, joined on server and
device, so the device's own series are never repeated per role.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pgio_tui import metrics as M
from pgio_tui.export import histograms
from pgio_tui.frame import Frame, Value
from pgio_tui.naming import machine_of
from pgio_tui.safe_text import printable

PREFIX = "pgio_"
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Family:
    name: str  # counters without `_total`, as OpenMetrics names the family
    type: str  # "gauge", "counter" or "histogram"
    unit: str  # "seconds", "bytes", "ratio" or "": the name ends with it
    help: str
    suffix: str = ""  # a histogram's samples: one Family each for _bucket, _count and _sum

    @property
    def sample_name(self) -> str:
        return self.name + "_total" if self.type == "counter" else self.name + self.suffix


@dataclass(frozen=True, slots=True)
class Rule:
    """How one catalog metric becomes one series: a level (gauge = value x scale), a rate
    (counter += value x dt x scale) or a per-tick count (counter += value x scale)."""

    metric: str
    family: Family
    how: str  # "level", "rate" or "count"
    scale: float = 1.0
    labels: Labels = ()


FAMILIES: dict[str, Family] = {}
RULES: list[Rule] = []  # scalar metrics (Frame.values)
DISK_RULES: list[Rule] = []  # per-device fields (Frame.devices), labelled device


def _family(name: str, type: str, help: str) -> Family:
    unit = next((u for u in ("seconds", "bytes", "ratio") if name.endswith("_" + u)), "")
    fam = FAMILIES.setdefault(PREFIX + name, Family(PREFIX + name, type, unit, help))
    assert fam.type == type, name
    return fam


def _rule(m: M.Metric, metric: str | None = None) -> Rule:
    """A catalog metric's series (its `prom`): a gauge is a level, a counter of a rate adds rate x dt,
    a counter of a per-tick count adds the count; values scaled to the base unit by the unit."""
    p = m.prom
    assert p is not None
    how = "level" if p.type == "gauge" else "rate" if m.kind == "rate" else "count"
    help = " ".join(filter(None, (p.help or m.help, p.note)))
    return Rule(metric or m.name, _family(p.name, p.type, help), how, m.unit.to_base, p.labels)


# Series of no single catalog metric, placed after the metrics of a pane.
CHECKPOINT_INFO = Family(PREFIX + "checkpoint_info", "gauge", "",
                         "1, labelled with the kind of the running (or last) checkpoint: time, wal, requested, ...")
WAITS = Family(PREFIX + "wait_sessions", "gauge", "", "Backends sampled in a wait event (CPU/Running: not waiting).")
UP = Family(PREFIX + "up", "gauge", "", "1 when the last tick reached PostgreSQL, 0 when it did not.")
DISK_ROLE = Family(PREFIX + "disk_role_info", "gauge", "", "1 per role a device has for PostgreSQL (data, wal, "
                   "tblspc; none: a disk it does not use): join on server and device.")
NO_ROLE = "none"
TRANSACTION_DURATION = Family(PREFIX + histograms.NAME, "histogram", "seconds", histograms.HELP)
_DURATION = {s: replace(TRANSACTION_DURATION, suffix=s) for s in histograms.SUFFIXES}
_AFTER_PANE = {"checkpoint": CHECKPOINT_INFO, "waits": WAITS, "statements": UP, "latency": TRANSACTION_DURATION}

_pane: str | None = None
for _m in M.CATALOG:
    if _m.pane != _pane and _pane in _AFTER_PANE:
        FAMILIES[_AFTER_PANE[_pane].name] = _AFTER_PANE[_pane]
    _pane = _m.pane
    if _m.prom is not None:
        RULES.append(_rule(_m))
if _pane in _AFTER_PANE:  # the last pane's
    FAMILIES[_AFTER_PANE[_pane].name] = _AFTER_PANE[_pane]
# pg_stat_io by backend type (16+): Frame.sources fields, labelled backend_type
SOURCE_RULES: list[Rule] = [_rule(m, m.name.rsplit(".", 1)[1]) for m in M.SOURCE_METRICS if m.prom]
# pg_stat_io by row (16+): Frame.io fields, labelled backend_type, object and context
IO_RULES: list[Rule] = [_rule(m, m.name.rsplit(".", 1)[1]) for m in M.IO_METRICS if m.prom]
# devices (iostat -x): Frame.devices fields, labelled device; their roles after them
DISK_RULES.extend(_rule(m, m.name.rsplit(".", 1)[1]) for m in M.DISK_METRICS if m.prom)
FAMILIES[DISK_ROLE.name] = DISK_ROLE

Sample = tuple[Family, Labels, float]


def server_label(meta: dict) -> str:
    """The `server` label: the database host's machine and port (naming.machine_of: the client's
    own name for a server reached by a socket or loopback, never a socket directory)."""
    host, port = machine_of(meta.get("host"), meta.get("client_host")), meta.get("port")
    return printable(f"{host}:{port}" if port else str(host or "unknown"))


class Converter:
    """Frames in tick order -> the samples of each tick. Counters are totals since the first
    Frame this converter saw; a counter series appears at its first known rate and then stays
    (a tick without a rate, e.g. after a stats reset, adds nothing).

    `add(frame)` keeps the totals (every tick); `samples(frame)` lays the tick out (only when a
    page is asked for: the live endpoint is scraped every 15 s to 1 min, not every tick). Each
    group of series (the scalars, a device, a backend type) is worked out once: labels made
    printable, each series' key, the counters among them."""

    MAX_GROUPS = 4096  # device, backend type, wait and kind names come from outside: a bounded cache

    def __init__(self, server: str):
        self.server = ("server", server)
        self._totals: dict[tuple[str, Labels], float] = {}
        self._scalars = _group(RULES, (self.server,))
        self._groups: dict[tuple, tuple] = {}  # ("dev"|"io"|"wait"|"kind", names...) -> group or labels
        self._latency = histograms.Cumulative()
        # The last wait sample: (session counts, waits). With many processes a tick may take none
        # (M.waits_sampled); a scrape then shows the last one rather than no sessions at all.
        self._wait_sample: tuple[dict[str, Value], list] = ({}, [])

    def update(self, frame: Frame) -> list[Sample]:
        self.add(frame)
        return self.samples(frame)

    def add(self, frame: Frame) -> None:
        dt = frame.dt
        self._count(self._scalars[1], frame.values, dt)
        for dev, row in frame.devices.items():
            self._count(self._device(dev)[1], row, dt)
        for btype, row in frame.sources.items():
            self._count(self._source(btype)[1], row, dt)
        for key, row in frame.io.items():
            self._count(self._io_row(key)[1], row, dt)
        self._latency.add(frame.latency_buckets)
        if M.waits_sampled(frame.values):
            self._wait_sample = ({m: frame.values.get(m) for m in M.WITH_THE_PROCESSES}, frame.waits)

    def samples(self, frame: Frame) -> list[Sample]:
        out: list[Sample] = []
        base = (self.server,)
        values, waits = frame.values, frame.waits
        up = values.get(M.OBSERVER_SERVER_MS) is not None
        if up and not M.waits_sampled(values):  # no wait sample this tick: the last one's
            values, waits = {**values, **self._wait_sample[0]}, self._wait_sample[1]
        out.append((UP, base, 1.0 if up else 0.0))
        self._sample(self._scalars[0], values, out)
        kind = values.get(M.CHECKPOINT_KIND)
        if isinstance(kind, str) and kind:
            out.append((CHECKPOINT_INFO, self._cached(("kind", kind), lambda: base + (("kind", printable(kind)),)),
                        1.0))
        for dev, row in frame.devices.items():
            self._sample(self._device(dev)[0], row, out)
            out += [(DISK_ROLE, labels, 1.0) for labels in self._roles(dev, frame.device_roles.get(dev))]
        for btype, row in frame.sources.items():
            self._sample(self._source(btype)[0], row, out)
        for key, row in frame.io.items():
            self._sample(self._io_row(key)[0], row, out)
        for btype, wtype, event, n in waits:
            labels = self._cached(("wait", btype, wtype, event), lambda: base + (
                ("backend_type", printable(btype)), ("wait_event_type", printable(wtype)),
                ("wait_event", printable(event))))
            out.append((WAITS, labels, float(n)))
        out += [(_DURATION[suffix], base + le, v) for suffix, le, v in self._latency.samples()]
        out.sort(key=lambda s: FAMILY_ORDER[s[0].name])  # families together, in definition order
        return out

    def _cached(self, key: tuple, make):
        got = self._groups.get(key)
        if got is None:
            if len(self._groups) >= self.MAX_GROUPS:
                self._groups.clear()
            got = self._groups[key] = make()
        return got

    def _device(self, dev: str) -> tuple:
        return self._cached(("dev", dev), lambda: _group(DISK_RULES, (self.server, ("device", printable(dev)))))

    def _roles(self, dev: str, roles: str | None) -> list[Labels]:
        """The labels of a device's role series: one per role ("data,wal" is two; none for a disk
        PostgreSQL does not use, so a dashboard's role filter on All keeps it)."""
        return self._cached(("role", dev, roles), lambda: [
            (self.server, ("device", printable(dev)), ("role", printable(r)))
            for r in [r for r in (roles or "").split(",") if r] or [NO_ROLE]])

    def _source(self, btype: str) -> tuple:
        return self._cached(("io", btype),
                            lambda: _group(SOURCE_RULES, (self.server, ("backend_type", printable(btype)))))

    def _io_row(self, key: tuple[str, str, str]) -> tuple:
        return self._cached(("iorow", *key), lambda: _group(IO_RULES, (self.server, *(
            (label, printable(name)) for label, name in zip(("backend_type", "object", "context"), key)))))

    def _count(self, counting: list, row: dict, dt: float | None) -> None:
        totals = self._totals
        for metric, key, scale, per_tick in counting:
            value = row.get(metric)
            if value is None or isinstance(value, str):
                continue
            step = float(value) * scale * (1.0 if per_tick else (dt or 0.0))
            if step >= 0 and (per_tick or dt):
                totals[key] = totals.get(key, 0.0) + step

    def _sample(self, series: list, row: dict, out: list[Sample]) -> None:
        totals = self._totals
        for metric, family, labels, key, scale, level in series:
            if level:
                value = row.get(metric)
                if value is not None and not isinstance(value, str):
                    out.append((family, labels, float(value) * scale))
            else:
                total = totals.get(key)
                if total is not None:
                    out.append((family, labels, total))


def _group(rules: list[Rule], labels: Labels) -> tuple[list, list]:
    """(every series: metric, family, labels, key, scale, is a level; the counters: metric, key,
    scale, counted per tick) of `rules` under `labels`."""
    series = [(r.metric, r.family, labels + r.labels, (r.family.name, labels + r.labels), r.scale, r.how == "level")
              for r in rules]
    counting = [(r.metric, key, r.scale, r.how == "count") for r, (_m, _f, _l, key, _s, level) in zip(rules, series)
                if not level]
    return series, counting


FAMILY_ORDER = {name: i for i, name in enumerate(FAMILIES)}


def exposed_names() -> Iterable[str]:
    """Every sample name pgio-tui exposes for a Frame (live and exported)."""
    for f in FAMILIES.values():
        yield from ([f.name + s for s in histograms.SUFFIXES] if f.type == "histogram" else [f.sample_name])


def families_matching(globs: Iterable[str]) -> dict[str, set[str]]:
    """glob -> the families it selects: by our catalog name (`mem.*`, `disk.*.util_pct`) or by the
    Prometheus name (`pgio_disk_*`)."""
    sources = [(r.metric, r.family) for r in RULES] + [(f"disk.*.{r.metric}", r.family) for r in DISK_RULES]
    sources += [(M.CHECKPOINT_KIND, CHECKPOINT_INFO), ("waits", WAITS), ("up", UP), ("disk.*.role", DISK_ROLE)]
    sources += [(f"io.*.{r.metric}", r.family) for r in SOURCE_RULES]
    sources += [(m, TRANSACTION_DURATION) for m in M.LATENCY_OVER.values()]  # its buckets hold these counts
    return {g: {f.name for metric, f in sources if fnmatch.fnmatch(metric, g) or fnmatch.fnmatch(f.sample_name, g)}
            for g in globs}


def markdown() -> str:
    """The name table of docs/prometheus.md, generated so the docs cannot drift from the mapping."""
    rows = ["| Prometheus name | type | labels | from |", "|---|---|---|---|"]
    seen: dict[str, list[str]] = {}
    for r in RULES:
        seen.setdefault(r.family.name, []).append(f"`{r.metric}`" + "".join(f" ({v})" for _, v in r.labels))
    seen.setdefault(CHECKPOINT_INFO.name, []).append("`checkpoint.kind`")
    seen.setdefault(WAITS.name, []).append("the wait sample (Waits pane)")
    seen.setdefault(UP.name, []).append("the tick reached PostgreSQL")
    seen.setdefault(DISK_ROLE.name, []).append("the device's roles (the recording's `devices.role`)")
    seen.setdefault(TRANSACTION_DURATION.name, []).append("the per-tick latency histograms (`latency_hist`)")
    for r in DISK_RULES:
        seen.setdefault(r.family.name, []).append(f"`disk.<device>.{r.metric}`")
    for r in SOURCE_RULES:
        seen.setdefault(r.family.name, []).append(f"pg_stat_io {r.metric} (relation, by backend type)")
    for r in IO_RULES:
        seen.setdefault(r.family.name, []).append(f"pg_stat_io `{r.metric}` by row (the recording's `io_rows`)")
    extra = {CHECKPOINT_INFO.name: "kind", WAITS.name: "backend_type, wait_event_type, wait_event",
             TRANSACTION_DURATION.name: "le", DISK_ROLE.name: "device, role"}
    for name, family in FAMILIES.items():
        labels = {lab for r in RULES + DISK_RULES if r.family is family for lab, _ in r.labels}
        if any(r.family is family for r in SOURCE_RULES):
            labels.add("backend_type")
        if any(r.family is family for r in IO_RULES):
            labels |= {"backend_type", "object", "context"}
        if any(r.family is family for r in DISK_RULES):
            labels.add("device")
        columns = ", ".join(["server", *sorted(labels), *([extra[name]] if name in extra else [])])
        sample = family.name + "_bucket/_count/_sum" if family.type == "histogram" else family.sample_name
        rows.append(f"| `{sample}` | {family.type} | {columns} | {', '.join(seen[name])} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
