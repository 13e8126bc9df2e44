"""The live Prometheus endpoint: one more consumer of Frames, its pages written by prometheus-client.

It costs nothing between scrapes: `on_frame()` only keeps the Frame. A scrape folds the Frames
since the last one into the counters' totals (promnames.Converter), lays out the latest tick once
per format (prometheus-client's `choose_encoder` negotiates the Prometheus text format or
OpenMetrics; each family's header and each series' text is laid out by prometheus-client once and
filled with the tick's values, in its own float format), gzips it once if asked, and keeps the
bytes: more scrapes of the same tick are a lookup. httpserve answers on one thread that sleeps
between requests (optionally over TLS, with basic auth).
"""

from __future__ import annotations

import collections
import gzip
import ssl
import threading
import time

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

from pgio_tui.export.httpserve import Answer, Server
from pgio_tui.export.promnames import PREFIX, Converter, Family, Labels, Sample
from pgio_tui.frame import Frame

DEFAULT_HOST = "127.0.0.1"
SCRAPE = Family(PREFIX + "exporter_last_scrape_duration_seconds", "gauge", "seconds",
                "Seconds the last scrape before this tick took to answer, from its request read to its page "
                "ready to send (NaN before the first).")
CPU = Family(PREFIX + "exporter_cpu_seconds", "counter", "seconds",
             "CPU time the /metrics endpoint's thread had used (requests, pages, gzip) when this tick's "
             "page was laid out.")
FOLD_AT = 600  # Frames kept for the next scrape; past this the tick folds them itself (nobody scrapes)
GZIP_LEVEL = 1  # ~4x smaller at a third of level 6's CPU


class ListenError(Exception):
    """The address cannot be served (bad syntax, port in use, no permission): one line for the user."""


def parse_listen(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` -> (host, port); HOST defaults to 127.0.0.1, an IPv6 host goes in brackets."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ListenError(f"--listen {text!r}: put an IPv6 address in brackets, e.g. [::1]:9808")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ListenError(f"--listen {text!r}: expected [HOST:]PORT with a port 0-65535, e.g. 9808 or 0.0.0.0:9808")
    return host or DEFAULT_HOST, int(port)


class _Samples:
    """A prometheus-client collector of fixed samples: one Metric per family, in order (`family`:
    a family to yield with no samples, for its header)."""

    def __init__(self, samples: list[Sample], family: Family | None = None):
        self.samples, self.family = samples, family

    def collect(self):
        if self.family is not None:
            yield Metric(self.family.name, self.family.help, self.family.type, self.family.unit)
        metric = None
        for family, labels, value in self.samples:
            if metric is None or metric.name != family.name:
                if metric is not None:
                    yield metric
                metric = Metric(family.name, family.help, family.type, family.unit)
            metric.add_sample(family.sample_name, dict(labels), value)
        if metric is not None:
            yield metric


class _Layout:
    """One family's text in one format: its header, and each series' line up to the value, each
    laid out by prometheus-client once (wait events come and go every tick; a series seen before
    is not laid out again — the labels are bounded, so is this cache)."""

    def __init__(self, encoder, family: Family, trailer: bytes):
        self.encoder, self.trailer = encoder, trailer
        self.header = self._text(_Samples([], family))
        self.lines: dict[tuple[str, Labels], str] = {}  # (sample name: a histogram has three, labels)

    def _text(self, collector: _Samples) -> str:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        return self.encoder(registry).removesuffix(self.trailer).decode()

    def line(self, family: Family, labels: Labels) -> str:
        key = (family.sample_name, labels)
        line = self.lines.get(key)
        if line is None:
            text = self._text(_Samples([(family, labels, 0.0)]))
            if not text.startswith(self.header) or not text.endswith(" 0.0\n"):
                raise ValueError(f"{family.name}: unexpected layout {text!r}")
            line = self.lines[key] = text[len(self.header):-len("0.0\n")]  # keeps the space
        return line


class Exporter:
    """Serves /metrics for the latest Frame. `start()` listens; `on_frame()` is the Session consumer."""

    def __init__(self, server: str, host: str = DEFAULT_HOST, port: int = 0, tls: ssl.SSLContext | None = None,
                 users: dict[str, bytes] | None = None):
        self.host, self.port, self.tls, self.users = host, port, tls, users  # httpserve.tls_context, read_users
        self.ticks = 0  # frames served so far
        self._converter = Converter(server)
        self._frames: collections.deque[Frame] = collections.deque()  # since the last fold
        self._frame = Frame(0, 0.0, 0.0, None)  # the latest folded; pgio_up 0 until the first tick
        self._lock = threading.Lock()  # folding and laying out (the scrape's thread; a tick when nobody scrapes)
        self._shown: Frame | None = None  # the Frame whose pages are in _pages
        self._samples: list[Sample] = []
        self._pages: dict[tuple[str, bool], bytes] = {}  # (content type, gzip) -> page of _shown
        self._encoders: dict[str, tuple] = {}  # Accept header -> choose_encoder's answer
        self._layouts: dict[str, tuple[dict[str, _Layout], bytes]] = {}  # type -> (family -> layout, trailer)
        self._last_scrape_s = float("nan")
        self._cpu_s = 0.0
        self._httpd: Server | None = None

    def start(self) -> str:
        """Listen (a daemon thread); returns the URL of /metrics. ListenError when it cannot."""
        try:
            self._httpd = Server(self.host, self.port, self._answer, self._served, self.tls, self.users)
        except (OSError, ValueError) as exc:
            raise ListenError(f"cannot listen on {self.host}:{self.port}: {getattr(exc, 'strerror', None) or exc}") \
                from None
        self.port = self._httpd.port
        self._httpd.start()
        return self.url

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/metrics"

    def on_frame(self, frame: Frame) -> None:
        """The tick's only work: keep the Frame (deque.append is atomic; the scrape folds it)."""
        self._frames.append(frame)
        self.ticks += 1
        if len(self._frames) > FOLD_AT:
            with self._lock:
                self._fold()

    def _fold(self) -> None:
        """Counters' totals up to the latest Frame; that Frame is the one the page shows."""
        frames = self._frames
        while frames:
            frame = frames.popleft()
            self._converter.add(frame)
            self._frame = frame

    def page(self, accept: str | None, gzipped: bool = False) -> tuple[bytes, str]:
        """The latest tick's page in the format `accept` asks for (gzipped if asked), and its content type."""
        accept = accept or ""
        chosen = self._encoders.get(accept)
        if chosen is None:
            if len(self._encoders) > 32:
                self._encoders.clear()
            chosen = self._encoders[accept] = choose_encoder(accept)
        encoder, ctype = chosen
        with self._lock:
            self._fold()
            if self._shown is not self._frame:
                self._shown, self._pages = self._frame, {}
                self._samples = self._converter.samples(self._frame)
                self._samples += [(SCRAPE, (), self._last_scrape_s), (CPU, (), self._cpu_s)]
            page = self._pages.get((ctype, gzipped))
            if page is None:
                page = self._pages.get((ctype, False))
                if page is None:
                    page = self._pages[ctype, False] = self._render(encoder, ctype)
                if gzipped:
                    page = self._pages[ctype, True] = gzip.compress(page, GZIP_LEVEL, mtime=0)
        return page, ctype

    def _answer(self, path: str, headers: dict[bytes, str]) -> Answer:
        if path == "/metrics":
            gzipped = gzip_accepted(headers.get(b"accept-encoding", ""))
            page, ctype = self.page(headers.get(b"accept"), gzipped)
            return Answer(200, ctype, page, "gzip" if gzipped else None)
        return Answer(200 if path == "/" else 404, "text/plain; charset=utf-8",
                      b"pgio-tui: Prometheus metrics are at /metrics\n")

    def _served(self, path: str, seconds: float) -> None:
        if path == "/metrics":
            self._last_scrape_s = seconds
            self._cpu_s = time.thread_time()  # this is the endpoint's thread

    def _render(self, encoder, ctype: str) -> bytes:
        """prometheus-client lays out each family's header and each series once (cached per
        format); a page is those texts with the tick's values (prometheus-client's float format)."""
        if ctype not in self._layouts:
            self._layouts[ctype] = ({}, encoder(CollectorRegistry(auto_describe=False)))  # "# EOF" in OpenMetrics
        layouts, trailer = self._layouts[ctype]
        parts: list[str] = []
        family = None
        name: str | None = None
        layout: _Layout  # set at a family's first sample
        lines: dict[tuple[str, Labels], str] = {}  # as _Layout.lines
        for fam, labels, value in self._samples:
            if fam is not family:
                family = fam
                if fam.name != name:  # a histogram's _bucket, _count and _sum: one family, one header
                    name = fam.name
                    layout = layouts.get(name) or layouts.setdefault(name, _Layout(encoder, fam, trailer))
                    parts.append(layout.header)
                    lines = layout.lines
            text = repr(value)
            if text[-1] in "fn" or (value > 0 and text.find(".") > 6):  # inf, nan; Go's exponents from 1e6
                text = floatToGoString(value)
            parts += (lines.get((fam.sample_name, labels)) or layout.line(fam, labels), text, "\n")
        return "".join(parts).encode() + trailer

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.close()
            self._httpd = None


def _scrape_sample(seconds: float) -> Sample:
    return (SCRAPE, (), seconds)
