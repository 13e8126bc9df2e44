"""The live Prometheus endpoint: one more consumer of Frames, served over HTTP by prometheus-client.

`on_frame()` converts each tick once (promnames.Converter) and keeps the result; a scrape only
formats the latest tick's samples, so its cost does not grow with the session. prometheus-client
serves the Prometheus text format, and OpenMetrics to scrapers that ask for it (Accept header).
"""

from __future__ import annotations

import threading
import time

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.metrics_core import Metric

from pgio_tui.export.promnames import PREFIX, Converter, Sample
from pgio_tui.frame import Frame

DEFAULT_HOST = "127.0.0.1"
SCRAPE_NAME = PREFIX + "exporter_last_scrape_duration_seconds"
SCRAPE_HELP = "Seconds the previous scrape of this endpoint took to collect and format its samples."


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


class Exporter:
    """Serves /metrics for the latest Frame (a prometheus-client Collector on its own registry)."""

    def __init__(self, server: str, host: str = DEFAULT_HOST, port: int = 0):
        self.host, self.port = host, port
        self._converter = Converter(server)
        self._samples: list[Sample] = Converter(server).update(Frame(0, 0.0, 0.0, None))  # pgio_up 0
        self._lock = threading.Lock()
        self._last_scrape_s: float | None = None
        self._httpd = None
        self.ticks = 0  # frames served so far

    def start(self) -> str:
        """Listen; returns the URL of /metrics. ListenError when the address cannot be served."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        try:
            self._httpd, _thread = start_http_server(self.port, addr=self.host, registry=registry)
        except (OSError, ValueError) as exc:
            raise ListenError(f"cannot listen on {self.host}:{self.port}: {getattr(exc, 'strerror', None) or exc}") \
                from None
        self.port = self._httpd.server_port
        return self.url

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def on_frame(self, frame: Frame) -> None:
        samples = self._converter.update(frame)
        with self._lock:
            self._samples = samples
        self.ticks += 1

    def collect(self):
        """One Metric per family, then the scrape timer. Timed until the scraper asks for more
        after the last family, i.e. with formatting, so the figure is the previous scrape's."""
        t0 = time.perf_counter()
        with self._lock:
            samples, last = self._samples, self._last_scrape_s
        metric = None
        for family, labels, value in samples:
            if metric is None or metric.name != family.name:
                if metric is not None:
                    yield metric
                metric = Metric(family.name, family.help, family.type, family.unit)
            metric.add_sample(family.sample_name, dict(labels), value)
        if metric is not None:
            yield metric
        if last is not None:
            scrape = Metric(SCRAPE_NAME, SCRAPE_HELP, "gauge", "seconds")
            scrape.add_sample(SCRAPE_NAME, {}, last)
            yield scrape
        self._last_scrape_s = time.perf_counter() - t0

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
