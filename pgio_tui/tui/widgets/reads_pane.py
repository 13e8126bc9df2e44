"""Reads and cache: shared-buffer misses against hits, read time, who reads and evicts (pg_stat_io),
shared buffers used and dirty, the kernel's page cache and its change, and pgio's RIOPS when it runs."""

from __future__ import annotations

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.ratios import hit_ratio, per_op_ms, share
from pgio_tui.tui.plot import ChartSpec, Line
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View
from pgio_tui.tui.widgets.wal_pane import mean

CHART = ChartSpec(series=(
    series_of(M.DB_BLKS_READ_S, "chart-1", label="reads/s"),
    series_of(M.PGIO_READS_S, "chart-3", label="pgio RIOPS"),
    series_of(M.MEM_CACHED_KB, "chart-2", label="page cache", group=1),
), empty_text="rates start at the second tick")
SOURCE_ROWS = 5  # backend types in the by-source table
# pg_stat_io contexts that cycle a small ring of buffers, and their short name in a table
RING_CONTEXTS = {"bulkread": "bulk", "bulkwrite": "bulk w", "vacuum": "vac"}
BUFFERS_LOOKBACK = 120  # ticks searched back for the last shared-buffers reading


def last_reading(view: View, metric: str) -> tuple[float, float] | None:
    """(value, its time) of a metric read only on some ticks: the last one at or before the view's end."""
    h = view.history
    col = h.series.get(metric)
    if not col:
        return None
    j = h.frame_index(view.t1)
    for k in range(j, max(-1, j - BUFFERS_LOOKBACK), -1):
        if col[k] is not None:
            return float(col[k]), h.t[k]
    return None


class ReadsPane(ChartPane):
    SPEC = PaneSpec("Reads & cache", CHART, ("reads",), layout="text-above", key="R")

    def series(self, view: View):
        return [s for s in CHART.series if view.history.has(s.metric)] or list(CHART.series)

    def subtitle(self, view: View) -> str:
        return "" if view.session.pg_stat_io else "by source: pg_stat_io is 16+"

    def text(self, view: View, width: int, height: int) -> list[Line]:
        h, t1 = view.history, view.t1
        now = lambda m: h.latest(m, t1)  # noqa: E731
        lines = [self.figures("now", now), self.figures(f"{fmt.window(t1 - view.t0)} mean", lambda m: mean(view, m))]
        lines.append(self.buffers_line(view))
        cached = now(M.MEM_CACHED_KB)
        if cached is not None:
            w = h.window(M.MEM_CACHED_KB, view.t0, t1)
            first = next(((t, v) for t, v in zip(w.t, w.v) if v is not None), None)
            runs: list = [("page cache ", "muted"), (fmt.kib(cached), "bold")]
            if first is not None and t1 > first[0]:
                change = cached - first[1]
                runs += [(f"  Δ{fmt.window(t1 - view.t0)} ", "muted"),
                         (("+" if change >= 0 else "-") + fmt.kib(abs(change)), None),
                         (f" ({'+' if change >= 0 else '-'}{fmt.kib(abs(change) / (t1 - first[0]))}/s)", "muted")]
            avail = now(M.MEM_AVAILABLE_KB)
            if avail is not None:
                runs += [("  available ", "muted"), (fmt.kib(avail), None)]
            lines.append(tuple(runs))
        if h.has(M.PGIO_READS_S, view.t0, t1):
            lines.append((("pgio   ", "muted"), ("RIOPS ", "muted"), (fmt.si(now(M.PGIO_READS_S)) + "/s", "bold"),
                          ("  hits ", "muted"), (fmt.si(now(M.PGIO_HITS_S)) + "/s", None),
                          ("  (the pgio workload's own statements)", "muted")))
        lines += self.source_lines(view, width)
        return lines

    @staticmethod
    def figures(label: str, get) -> Line:
        reads, hits, rtime = get(M.DB_BLKS_READ_S), get(M.DB_BLKS_HIT_S), get(M.DB_BLK_READ_TIME_MS_S)
        ratio = hit_ratio(reads, hits)
        runs: list = [(label.ljust(7) + " ", "muted"), ("reads ", "muted"), (fmt.si(reads) + "/s", "bold"),
                      ("  hits ", "muted"), (fmt.si(hits) + "/s", None),
                      ("  hit ratio ", "muted"), ("-" if ratio is None else f"{ratio * 100:.1f}%", None)]
        if rtime is not None:
            each = per_op_ms(rtime, reads)
            runs += [("  read time ", "muted"), (fmt.si(rtime) + " ms/s", None),
                     (f" ({fmt.ms(each)} ms/read)" if each is not None and rtime else "", "muted")]
        return tuple(runs)

    @staticmethod
    def buffers_line(view: View) -> Line:
        settings = view.session.settings
        used, dirty = last_reading(view, M.BUFFERS_USED), last_reading(view, M.BUFFERS_DIRTY)
        if used is None:
            why = "not read yet, or no pg_buffercache (16+, CREATE EXTENSION)"  # whole at 80 columns
            return (("shared buffers ", "muted"), (why, "muted"))
        block_kb = float(settings.get("block_size") or 8192) / 1024
        total = float(settings["shared_buffers"]) if settings.get("shared_buffers", "").isdigit() else None
        runs: list = [("shared buffers ", "muted"), ("used ", "muted"), (fmt.kib(used[0] * block_kb), "bold")]
        if total:
            runs += [(f"/{fmt.kib(total * block_kb)} ({fmt.fraction(share(used[0], total))})", "muted")]
        if dirty is not None:
            runs += [("  dirty ", "muted"), (fmt.kib(dirty[0] * block_kb), None),
                     (f" ({fmt.fraction(share(dirty[0], used[0]))} of used)", "muted")]
        runs.append((f"  {max(0.0, view.t1 - used[1]):.0f} s ago", "muted"))
        return tuple(runs)

    @staticmethod
    def source_lines(view: View, width: int) -> list[Line]:
        """Who reads, hits, evicts and reuses, with the mean ms per read, write and fsync (16+; time
        with track_io_timing): by backend type, each ring context (bulkread, bulkwrite, vacuum) on a row
        of its own, then the shared_buffers pressure line. Files and servers without rows: by type."""
        io = view.history.io_summary(view.t0, view.t1)
        if not io:
            return ReadsPane.type_lines(view, width)
        rows: dict[str, dict] = {}
        for (btype, obj, ctx), r in io.items():
            if obj != "relation":  # WAL (18) is the WAL view's; temp relations use local buffers
                continue
            name = btype if ctx in ("normal", "init") else f"{btype} ({RING_CONTEXTS[ctx]})"
            acc = rows.setdefault(name, {})
            for f, v in r.items():
                if f.endswith("_per_op"):  # one row per name: the context's own mean (init has none)
                    acc[f] = v if acc.get(f) is None else acc[f]
                else:
                    acc[f] = acc.get(f, 0.0) + v
        top = sorted(rows.items(), key=lambda kv: -(kv[1]["reads"] + kv[1]["evictions"] + kv[1]["writes"]
                                                    + kv[1]["hits"] / 100))[:SOURCE_ROWS]
        cols = (("reads/s", "reads"), ("evict/s", "evictions"), ("reuse/s", "reuses"),
                ("ms/read", "read_ms_per_op"), ("ms/write", "write_ms_per_op"), ("ms/fsync", "fsync_ms_per_op"))
        name_w = max(12, min(30, width - 51 - 1))
        head = f"{'by source, ' + fmt.window(view.t1 - view.t0) + ' mean':<{name_w}}" + "".join(
            c.rjust(9 if c.startswith("ms") else 8) for c, _ in cols)
        out: list[Line] = [((head, "muted"),)]
        for name, r in top:
            cells = "".join(fmt.ms(r.get(f)).rjust(9) if f.endswith("_per_op") else fmt.si(r.get(f)).rjust(8)
                            for _, f in cols)
            out.append(((name[:name_w - 1].ljust(name_w), None), (cells, None)))
        out.append(ReadsPane.pressure_line(io))
        return out

    @staticmethod
    def pressure_line(io: dict) -> Line:
        """shared_buffers pressure: evictions and ring reuses over the window, by context kind, with
        the hit ratio of shared buffers (pg_stat_io: relation rows; temp relations are local)."""
        def total(f: str, rings: bool | None = None) -> float:
            return sum(r[f] for (_bt, obj, ctx), r in io.items() if obj == "relation"
                       and (rings is None or (ctx in RING_CONTEXTS) == rings))
        ratio = hit_ratio(total("reads"), total("hits"))
        return (("shared_buffers ", "muted"), ("evict ", "muted"), (fmt.si(total("evictions")) + "/s", "bold"),
                (f" (rings {fmt.si(total('evictions', True))})", "muted"),
                ("  reuse ", "muted"), (fmt.si(total("reuses")) + "/s", None),
                ("  hit ratio ", "muted"), ("-" if ratio is None else f"{ratio * 100:.1f}%", None))

    @staticmethod
    def type_lines(view: View, width: int) -> list[Line]:
        rows = view.history.sources_summary(view.t0, view.t1)
        if not rows:
            return []
        top = sorted(rows.items(), key=lambda kv: -(kv[1].get("reads", 0) + kv[1].get("evictions", 0)
                                                    + kv[1].get("hits", 0) / 100))[:SOURCE_ROWS]
        name_w = max(12, min(20, width - 3 * 8 - 2))
        head = f"{'by source, ' + fmt.window(view.t1 - view.t0) + ' mean':<{name_w}}" + "".join(
            c.rjust(8) for c in ("reads/s", "hits/s", "evict/s"))
        out: list[Line] = [((head, "muted"),)]
        for btype, r in top:
            cells = "".join(fmt.si(r.get(f)).rjust(8) for f in ("reads", "hits", "evictions"))
            out.append(((btype[:name_w - 1].ljust(name_w), None), (cells, None)))
        return out
