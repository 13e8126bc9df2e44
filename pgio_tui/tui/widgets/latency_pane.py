"""Latency: tps and mean/p95/p99 per tick, and how many transactions were slower than 100-500 ms.

Transaction latency comes only from a launched workload. Without one the pane shows statement
execution time from pg_stat_statements, labelled as such ("stmt"), never with transaction words.
"""

from __future__ import annotations

from pgio_tui import metrics
from pgio_tui.tui import format as fmt
from pgio_tui.tui.plot import ChartSpec, Line, Series
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View

# Per-tick counts of transactions slower than N ms; a launched workload (pgbench's per-transaction
# log) provides them, the server's statistics cannot.
OVER_MS = getattr(metrics, "LATENCY_THRESHOLDS_MS", (100, 200, 300, 400, 500))
OVER_METRICS = tuple(f"latency.over_{n}ms" for n in OVER_MS)
LATENCY = (
    Series("latency.mean_ms", "mean", "chart-1", fmt=fmt.ms),
    Series("latency.p95_ms", "p95", "chart-2", fmt=fmt.ms),
    Series("latency.p99_ms", "p99 ms", "chart-3", fmt=fmt.ms),
    Series("latency.tps", "tps", "chart-4", group=1),
)
STATEMENTS = (
    Series("statements.mean_ms", "stmt mean ms", "chart-1", fmt=fmt.ms),
    Series("latency.tps", "tps", "chart-4", group=1),
)
TPS_ALONE = Series("latency.tps", "tps", "chart-4")
CHART = ChartSpec(series=LATENCY)


class LatencyPane(ChartPane):
    SPEC = PaneSpec("5", "Latency", CHART, ("latency",))

    def series(self, view: View) -> list[Series]:
        h = view.history
        series = [s for s in LATENCY if h.has(s.metric)]
        if series and all(s.group for s in series):  # no transaction latency: statements, else tps alone
            series = [s for s in STATEMENTS if h.has(s.metric)]
            if all(s.group for s in series):
                series = [TPS_ALONE]
        return series or list(LATENCY)

    def subtitle(self, view: View) -> str:
        return self.source(view)

    def text(self, view: View, width: int, height: int) -> list[Line]:
        return self.text_lines(view)

    def empty_text(self, view: View) -> str:
        return view.session.why_no_latency()

    @staticmethod
    def source(view: View) -> str:
        h = view.history
        if h.has("latency.p50_ms"):
            return "per transaction (workload log)"
        if h.has("latency.mean_ms"):
            return "per transaction (workload)"
        if h.has("statements.mean_ms"):
            return "statements (pg_stat_statements), not transactions"
        if h.has("latency.tps"):
            return "tps only: " + ("pg_stat_statements not installed" if not view.session.pgss
                                   else "no statements ran")
        return ""

    @staticmethod
    def text_lines(view: View) -> list[Line]:
        h, t0, t1 = view.history, view.t0, view.t1
        g = lambda m: h.latest(m, t1)  # noqa: E731
        if h.has("latency.mean_ms") or not h.has("statements.mean_ms"):
            first: list = [("stddev ", "muted"), (fmt.ms(g("latency.stddev_ms")), None), ("  p50 ", "muted"),
                           (fmt.ms(g("latency.p50_ms")), None), ("  max ", "muted"),
                           (fmt.ms(g("latency.max_ms")), None)]
        else:
            first = [("stmt mean ", "muted"), (fmt.ms(g("statements.mean_ms")), None), ("  stmt stddev ", "muted"),
                     (fmt.ms(g("statements.stddev_ms")), None), ("  stmts/s ", "muted"),
                     (fmt.si(g("statements.calls_s")), None)]
        if any(h.has(m) for m in OVER_METRICS):
            second: list = [("> ms ", "muted")]
            for n, m in zip(OVER_MS, OVER_METRICS):
                now = g(m)
                tot = sum(v for v in h.window(m, t0, t1).v if v is not None)
                second += [(f"{n}:", "muted"), (fmt.si(now), "crit" if now else None),
                           (f"/{fmt.si(tot)} ", "muted")]
            second.append(("(tick/window)", "muted"))
        else:
            second = [("counts >100..500 ms: need a workload launched by pgio-tui", "muted")]
        return [tuple(first), tuple(second)]
