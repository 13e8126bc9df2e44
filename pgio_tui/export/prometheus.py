"""The live Prometheus endpoint: one more consumer of Frames, its pages written by prometheus-client.

`on_frame()` converts each tick once (promnames.Converter). A scrape is cheap because a family's
text is laid out by prometheus-client (`choose_encoder` for content negotiation: the Prometheus text
format, or OpenMetrics for scrapers that ask) only when its series change; each tick then only
fills in the values (prometheus-client's own float formatting), once per format however many
scrapers ask. The HTTP server keeps connections alive (Prometheus reuses them) and does not
compress: a page is ~15 kB, and not spending CPU on it matters more next to the database.
"""

from __future__ import annotations

import email.utils
import functools
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

from pgio_tui.export.promnames import PREFIX, Converter, Family, Labels, Sample
from pgio_tui.frame import Frame

DEFAULT_HOST = "127.0.0.1"
SCRAPE = Family(PREFIX + "exporter_last_scrape_duration_seconds", "gauge", "seconds",
                "Seconds the last scrape before this tick took to answer (NaN before the first).")


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
        self.encoder, self.family, self.trailer = encoder, family, trailer
        self.header = self._text(_Samples([], family))
        self.lines: dict[Labels, str] = {}

    def _text(self, collector: _Samples) -> str:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        return self.encoder(registry).removesuffix(self.trailer).decode()

    def line(self, labels: Labels) -> str:
        line = self.lines.get(labels)
        if line is None:
            text = self._text(_Samples([(self.family, labels, 0.0)]))
            if not text.startswith(self.header) or not text.endswith(" 0.0\n"):
                raise ValueError(f"{self.family.name}: unexpected layout {text!r}")
            line = self.lines[labels] = text[len(self.header):-len("0.0\n")]  # keeps the space
        return line


class Exporter:
    """Serves /metrics for the latest Frame. `start()` listens; `on_frame()` is the Session consumer."""

    def __init__(self, server: str, host: str = DEFAULT_HOST, port: int = 0):
        self.host, self.port = host, port
        self.ticks = 0  # frames served so far
        self._converter = Converter(server)
        self._frame = Frame(0, 0.0, 0.0, None)  # pgio_up 0 until the first tick
        self._samples: list[Sample] | None = None  # the latest tick's, laid out on the first scrape
        self._lock = threading.Lock()
        self._pages: dict[str, bytes] = {}  # content type -> page of the latest tick
        self._layouts: dict[str, tuple[dict[str, _Layout], bytes]] = {}  # type -> (family -> layout, trailer)
        self._last_scrape_s = float("nan")
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> str:
        """Listen (a daemon thread); returns the URL of /metrics. ListenError when it cannot."""
        handler = type("Handler", (_Handler,), {"exporter": self})
        try:
            family = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
            server_class = type("Server", (ThreadingHTTPServer,), {"address_family": family, "daemon_threads": True})
            self._httpd = server_class((self.host, self.port), handler)
        except (OSError, ValueError) as exc:
            raise ListenError(f"cannot listen on {self.host}:{self.port}: {getattr(exc, 'strerror', None) or exc}") \
                from None
        self.port = self._httpd.server_address[1]
        threading.Thread(target=_accept_forever, args=(self._httpd,), name="pgio-metrics", daemon=True).start()
        return self.url

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def on_frame(self, frame: Frame) -> None:
        with self._lock:
            self._converter.add(frame)
            self._frame, self._samples, self._pages = frame, None, {}
        self.ticks += 1

    def page(self, accept: str | None) -> tuple[bytes, str]:
        """The latest tick's page in the format `accept` asks for, and its content type."""
        encoder, ctype = choose_encoder(accept or "")
        with self._lock:
            if self._samples is None:
                self._samples = self._converter.samples(self._frame)
            page = self._pages.get(ctype)
            if page is None:
                page = self._pages[ctype] = self._render(encoder, ctype)
        return page, ctype

    def _render(self, encoder, ctype: str) -> bytes:
        """prometheus-client lays out each family's header and each series once (cached per
        format); a page is those texts with the tick's values (prometheus-client's float format)."""
        if ctype not in self._layouts:
            self._layouts[ctype] = ({}, encoder(CollectorRegistry(auto_describe=False)))  # "# EOF" in OpenMetrics
        layouts, trailer = self._layouts[ctype]
        parts: list[str] = []
        family = None
        for fam, labels, value in [*self._samples, _scrape_sample(self._last_scrape_s)]:
            if fam is not family:
                family = fam
                layout = layouts.get(fam.name)
                if layout is None:
                    layout = layouts[fam.name] = _Layout(encoder, fam, trailer)
                parts.append(layout.header)
            parts += (layout.line(labels), floatToGoString(value), "\n")
        return "".join(parts).encode() + trailer

    def close(self) -> None:
        if self._httpd is not None:
            try:
                self._httpd.socket.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            self._httpd.server_close()
            self._httpd = None


def _accept_forever(httpd: ThreadingHTTPServer) -> None:
    """socketserver's serve_forever wakes twice a second to look for a shutdown request; between
    scrapes (15 s to 1 min in most Prometheus configs) this thread sleeps in accept() instead, and
    `close()` wakes it by shutting the listening socket down."""
    while True:
        try:
            request, address = httpd.socket.accept()
        except OSError:
            return
        httpd.process_request(request, address)  # a thread per connection (kept alive by Prometheus)


@functools.lru_cache(maxsize=1)
def _http_date_of(second: int) -> str:
    return email.utils.formatdate(second, usegmt=True)


def _http_date() -> str:
    """The Date header, formatted once per second however many scrapers ask."""
    return _http_date_of(int(time.time()))


def _scrape_sample(seconds: float) -> Sample:
    return (SCRAPE, (), seconds)


class _Handler(BaseHTTPRequestHandler):
    """GET /metrics (HTTP/1.1, kept alive); / says where the metrics are; anything else is 404."""

    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and page leave in one send (flushed after each request)
    timeout = 300  # an idle kept-alive connection is dropped (and its thread ends) after this
    exporter: Exporter

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        t0 = time.perf_counter()
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body, ctype, status = *self.exporter.page(self.headers.get("Accept")), 200
        else:
            body, ctype = b"pgio-tui: Prometheus metrics are at /metrics\n", "text/plain; charset=utf-8"
            status = 200 if path == "/" else 404
        self.send_response_only(status)  # send_response would also format an access-log line we drop
        self.send_header("Date", _http_date())
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if status == 200 and path == "/metrics":
            self.exporter._last_scrape_s = time.perf_counter() - t0

    def log_message(self, format, *args) -> None:  # noqa: A002 - no access log on stderr
        pass
