"""Latency: tps and mean/p95/p99 per tick, and how many transactions were slower than 100-500 ms
(a launched workload) and how many statements of any client (the server log's duration: lines).

Transaction latency comes only from a launched workload. Without one the pane shows statement
execution time from pg_stat_statements, labelled as such ("stmt"), never with transaction words.
"""

from __future__ import annotations

from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.tui.plot import ChartSpec, Line, Run, Series
from pgio_tui.tui.widgets.chart import series_of
from pgio_tui.tui.widgets.pane import ChartPane, PaneSpec, View
from pgio_tui.tui.window_sums import WindowSums, column_rows

# Per-tick counts of transactions slower than N ms; a launched workload (pgbench's per-transaction
# log) provides them, the server's statistics cannot.
LATENCY = (
    series_of(M.LATENCY_MEAN_MS, "chart-1"),
    series_of(M.LATENCY_P95_MS, "chart-2"),
    series_of(M.LATENCY_P99_MS, "chart-3", unit=True),
    series_of(M.LATENCY_TPS, "chart-4", group=1),
)
STATEMENTS = (
    series_of(M.STATEMENTS_MEAN_MS, "chart-1", label="stmt mean ms"),
    series_of(M.LATENCY_TPS, "chart-4", group=1),
)
TPS_ALONE = series_of(M.LATENCY_TPS, "chart-4")
CHART = ChartSpec(series=LATENCY)
COUNTS = column_rows([*M.LATENCY_OVER.values(), *M.STATEMENTS_LOG_OVER.values()])  # summed over the window


class LatencyPane(ChartPane):
    SPEC = PaneSpec(
        "Latency", CHART, ("latency",), name="latency", short="Latency", vital_rank=2,
        help="tps, mean, p95, p99 per tick; counts over 100-500 ms.")

    @staticmethod
    def vital(view: View) -> list[Run]:
        lat: list[Run] = [("tps ", "muted"), (fmt.si(view.now(M.LATENCY_TPS)), None)]
        p99, mean, stmt = view.now(M.LATENCY_P99_MS), view.now(M.LATENCY_MEAN_MS), view.now(M.STATEMENTS_MEAN_MS)
        if p99 is not None:
            lat += [(" p99 ", "muted"), (fmt.ms(p99), None)]
        elif mean is not None:
            lat += [(" mean ", "muted"), (fmt.ms(mean), None)]
        elif stmt is not None:  # statement time, not a transaction's: said so
            lat += [(" stmt ", "muted"), (fmt.ms(stmt), None)]
        return lat

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
        return self.text_lines(view, self.window_sums(COUNTS))

    def empty_text(self, view: View) -> str:
        return view.session.why_no_latency()

    @staticmethod
    def source(view: View) -> str:
        h = view.history
        if h.has(M.LATENCY_P50_MS):
            return "per transaction (workload log)"
        if h.has(M.LATENCY_MEAN_MS):
            return "per transaction (workload)"
        if h.has(M.STATEMENTS_MEAN_MS):
            return "statements (pg_stat_statements), not transactions"
        if h.has(M.LATENCY_TPS):
            return "tps only: " + ("pg_stat_statements not installed" if not view.session.pgss
                                   else "no statements ran")
        return ""

    @staticmethod
    def text_lines(view: View, sums: WindowSums | None = None) -> list[Line]:
        """`sums`, kept by the caller between redraws, counts the window without summing it again."""
        h, t0, t1 = view.history, view.t0, view.t1
        if sums is not None and not sums.update(h, t0, t1):
            sums = None
        g = lambda m: h.latest(m, t1)  # noqa: E731
        if h.has(M.LATENCY_MEAN_MS) or not h.has(M.STATEMENTS_MEAN_MS):
            first: list = [("stddev ", "muted"), (fmt.ms(g(M.LATENCY_STDDEV_MS)), None), ("  p50 ", "muted"),
                           (fmt.ms(g(M.LATENCY_P50_MS)), None), ("  max ", "muted"),
                           (fmt.ms(g(M.LATENCY_MAX_MS)), None)]
        else:
            first = [("stmt mean ", "muted"), (fmt.ms(g(M.STATEMENTS_MEAN_MS)), None), ("  stmt stddev ", "muted"),
                     (fmt.ms(g(M.STATEMENTS_STDDEV_MS)), None), ("  stmts/s ", "muted"),
                     (fmt.si(g(M.STATEMENTS_CALLS_S)), None)]
        log = _counts(h, g, t0, t1, M.STATEMENTS_LOG_OVER, "statements, server log > ms ", sums)
        if any(h.has(m) for m in M.LATENCY_OVER.values()):
            second = _counts(h, g, t0, t1, M.LATENCY_OVER, "> ms ", sums)
            second.append(("(tick/window)", "muted"))
            return [tuple(first), tuple(second)] + ([tuple(log)] if log else [])
        if log:
            return [tuple(first), tuple(log)]
        low, high = M.LATENCY_THRESHOLDS_MS[0], M.LATENCY_THRESHOLDS_MS[-1]
        second = [(f"counts >{low}..{high} ms: need a workload launched by pgio-tui", "muted")]
        return [tuple(first), tuple(second)]


def _counts(h, g, t0, t1, metrics: dict[int, str], title: str, sums: WindowSums | None = None) -> list:
    """`title` then, per threshold, this tick's count / the window's (empty: no such figures)."""
    if not any(h.has(m) for m in metrics.values()):
        return []
    out: list = [(title, "muted")]
    for n, m in metrics.items():
        now = g(m)
        tot = sums.total(m) if sums is not None else sum(v for v in h.window(m, t0, t1).v if v is not None)
        out += [(f"{n}:", "muted"), (fmt.si(now), "crit" if now else None), (f"/{fmt.si(tot)}", "muted"), (" ", None)]
    return out
