"""The endpoint's HTTP side (export/httpserve.py) over real sockets: kept-alive and pipelined
requests, HEAD, gzip when asked, what it refuses, and that it does nothing between scrapes:
ticks only hand it a Frame, and its thread sleeps until a request comes."""

from __future__ import annotations

import gzip
import http.client
import re
import socket
import time

import pytest

from pgio_tui.export import httpserve
from pgio_tui.export import prometheus as P
from pgio_tui.store.reader import Recording

OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


@pytest.fixture
def frames(fixture_file):
    with Recording(fixture_file) as rec:
        return list(rec.frames(0, 80))


@pytest.fixture
def exporter(frames):
    exporter = P.Exporter("fixture-host:5432", port=0)
    exporter.start()
    for frame in frames[:40]:
        exporter.on_frame(frame)
    yield exporter
    exporter.close()


def _raw(port: int, data: bytes, until_closed: bool = True, timeout: float = 5) -> bytes:
    """Sends `data` as is and reads what comes back until the server closes (or `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except TimeoutError:
            assert not until_closed, got[:300]
        return got


def test_kept_alive_gzip_when_asked_and_identity_otherwise(exporter, frames):
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=5)
    conn.request("GET", "/metrics", headers={"Accept": OPENMETRICS, "Accept-Encoding": "gzip"})
    r = conn.getresponse()
    zipped = r.read()
    assert r.status == 200 and r.getheader("Content-Encoding") == "gzip"
    assert r.getheader("Content-Type").startswith("application/openmetrics-text")
    assert r.getheader("Vary") == "Accept-Encoding" and r.getheader("Date").endswith(" GMT")
    conn.request("GET", "/metrics?x=1", headers={"Accept": OPENMETRICS})  # same connection, same tick
    r = conn.getresponse()
    plain = r.read()
    assert r.status == 200 and r.getheader("Content-Encoding") is None
    assert gzip.decompress(zipped) == plain == exporter.page(OPENMETRICS)[0]
    assert plain.endswith(b"# EOF\n")
    conn.request("HEAD", "/metrics")
    r = conn.getresponse()
    assert r.status == 200 and r.read() == b"" and int(r.getheader("Content-Length")) > 1000
    conn.close()


def test_one_page_per_tick_and_format(exporter, frames):
    first = exporter.page(None)
    assert exporter.page(None)[0] is first[0]  # a second scrape of the tick is a lookup
    assert exporter.page(None, gzipped=True)[0] is exporter.page(None, gzipped=True)[0]
    exporter.on_frame(frames[40])
    assert exporter.page(None)[0] != first[0]


def test_pipelined_requests_answered_in_order(exporter):
    got = _raw(exporter.port, b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"
                              b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    statuses = re.findall(rb"^HTTP/1\.1 (\d+) ", got, re.M)
    assert statuses == [b"404", b"200", b"200"], got[:500]
    assert got.count(b"pgio-tui: Prometheus metrics are at /metrics\n") == 2
    assert b"# TYPE pgio_wal_bytes_total counter" in got


def test_a_request_split_across_packets(exporter):
    with socket.create_connection(("127.0.0.1", exporter.port), timeout=5) as s:
        for part in (b"GE", b"T /metr", b"ics HTTP/1.1\r\nAccept: text/plain\r", b"\n\r\n"):
            s.sendall(part)
            time.sleep(0.05)
        head = s.recv(65536)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n"), head[:200]


@pytest.mark.parametrize("request_, status", [
    (b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", b"400"),  # a body is never read
    (b"DELETE /metrics HTTP/1.1\r\n\r\n", b"405"),
    (b"nonsense\r\n\r\n", b"400"),
    (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
    (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * (httpserve.MAX_HEAD + 10), b"431"),
])
def test_refusals_answer_and_close(exporter, request_, status):
    got = _raw(exporter.port, request_)
    assert got.startswith(b"HTTP/1.1 " + status + b" "), got[:200]
    assert b"Connection: close\r\n" in got


def test_http_1_0_closes_unless_kept_alive(exporter):
    assert _raw(exporter.port, b"GET /metrics HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 200 OK")  # closed: returned
    got = _raw(exporter.port, b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", until_closed=False, timeout=0.5)
    assert b"Connection: keep-alive\r\n" in got


def test_idle_connections_are_closed(exporter, monkeypatch):
    monkeypatch.setattr(httpserve, "IDLE_S", 0.3)
    with socket.create_connection(("127.0.0.1", exporter.port), timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        t0 = time.monotonic()
        assert s.recv(1) == b""  # closed by the server
        assert time.monotonic() - t0 < 4


def test_close_ends_the_thread_and_frees_the_port(frames):
    exporter = P.Exporter("h", port=0)
    exporter.start()
    thread, port = exporter._httpd._thread, exporter.port
    kept = socket.create_connection(("127.0.0.1", port), timeout=5)  # a kept-alive scraper
    kept.sendall(b"GET / HTTP/1.1\r\n\r\n")
    kept.recv(65536)
    exporter.close()
    assert not thread.is_alive()
    assert kept.recv(1) == b""
    kept.close()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_nothing_happens_between_scrapes(exporter, frames):
    """Ticks only queue the Frame; the endpoint's thread, with a scraper's connection kept open,
    uses no CPU until the next request."""
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=5)
    conn.request("GET", "/metrics")
    conn.getresponse().read()
    clock = time.pthread_getcpuclockid(exporter._httpd._thread.ident)
    time.sleep(0.1)
    cpu0, totals = time.clock_gettime(clock), dict(exporter._converter._totals)
    for frame in frames[40:60]:
        exporter.on_frame(frame)
        time.sleep(0.05)
    assert time.clock_gettime(clock) - cpu0 < 0.002  # ~0 s: asleep in the selector
    assert exporter._converter._totals == totals  # nothing folded yet: the scrape does it
    conn.request("GET", "/metrics")
    page = conn.getresponse().read()
    conn.close()
    assert len(exporter._frames) == 0 and exporter._converter._totals != totals
    m = re.search(rb"^pgio_exporter_cpu_seconds_total (\S+)$", page, re.M)
    assert m and 0 < float(m.group(1)) < 5


def test_nobody_scraping_folds_on_the_tick_with_the_same_totals(frames, monkeypatch):
    lazy = P.Exporter("h", port=0)
    for frame in frames:
        lazy.on_frame(frame)
    assert len(lazy._frames) == len(frames)  # all kept for the first scrape
    monkeypatch.setattr(P, "FOLD_AT", 7)
    folding = P.Exporter("h", port=0)
    for frame in frames:
        folding.on_frame(frame)
        assert len(folding._frames) <= 7
    assert folding.page(None)[0] == lazy.page(None)[0]


def test_a_failing_page_is_one_line_and_the_endpoint_lives_on(exporter, monkeypatch):
    def broken(*_args):
        raise ValueError("boom\x1b[31m")

    monkeypatch.setattr(exporter, "page", broken)
    got = _raw(exporter.port, b"GET /metrics HTTP/1.1\r\n\r\n")
    assert got.startswith(b"HTTP/1.1 500 Internal Server Error\r\n"), got[:200]
    assert got.endswith(b"\r\n\r\npgio-tui: error: ValueError: boom\\x1b[31m\n"), got
    monkeypatch.undo()
    assert _raw(exporter.port, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 200 OK")
