"""The endpoint's HTTP side (export/httpserve.py) over real sockets: kept-alive and pipelined
requests, HEAD, gzip when asked, what it refuses, and that it does nothing between scrapes:
ticks only hand it a Frame, and its thread sleeps until a request comes."""

from __future__ import annotations

import base64
import gzip
import os
import http.client
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

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


# --- abuse: Trust III rows 2 and 5, over real sockets on 127.0.0.1 -------------------------------

def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _RssWatch:
    """The process's peak resident size while the block runs, sampled every 20 ms."""

    def __enter__(self):
        self.before, self.peak, self._stop = _rss_mb(), 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())


def _scrape_ok(port: int) -> float:
    """Seconds a fresh scraper's GET /metrics takes (asserting a 200 and a whole page)."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    body = r.read()
    conn.close()
    assert r.status == 200 and b"pgio_up" in body
    return time.monotonic() - t0


def _thread_cpu(exporter) -> float:
    return time.clock_gettime(time.pthread_getcpuclockid(exporter._httpd._thread.ident))


def _the_connection(exporter) -> httpserve._Conn:
    """The server's one connection, once its thread has accepted it."""
    for _ in range(100):
        if exporter._httpd._conns:
            return next(iter(exporter._httpd._conns.values()))
        time.sleep(0.02)
    raise AssertionError("the connection was never accepted")


class _Ticks:
    """A sampler's stand-in: hands the exporter a Frame every 50 ms; `late` is the worst delay."""

    def __init__(self, exporter, frames):
        self.exporter, self.frames, self.late, self._stop = exporter, frames, 0.0, threading.Event()

    def __enter__(self):
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()
        return self

    def _tick(self):
        due = time.monotonic()
        for i in range(10_000):
            due += 0.05
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            self.late = max(self.late, time.monotonic() - due)
            self.exporter.on_frame(self.frames[-1])  # the same Frame: only the timing matters here

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def test_pipelining_without_reading_is_bounded(exporter, frames):
    """Issue 21 row 2: 29,411 pipelined GET /metrics on one socket that never reads grew the process
    by 362 MB. Now the server stops reading once MAX_UNSENT bytes wait: the client's sends stall,
    memory stays put, the thread sleeps, other scrapers are served; once the client reads, the
    waiting requests are answered in order."""
    page = len(exporter.page(None)[0])
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    data = memoryview(request * 29411)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", exporter.port))
    s.settimeout(0.2)
    sent, stalled = 0, 0
    with _RssWatch() as rss, _Ticks(exporter, frames) as ticks:
        deadline = time.monotonic() + 20
        while sent < len(data) and stalled < 5 and time.monotonic() < deadline:  # 1 s without progress: stuck
            try:
                sent += s.send(data[sent:sent + 65536])
                stalled = 0
            except TimeoutError:
                stalled += 1
        conn = _the_connection(exporter)
        time.sleep(0.5)  # the server answers until MAX_UNSENT bytes wait, then stops reading
        unsent, unread, answered = len(conn.outbuf), len(conn.inbuf), conn.answered
        cpu0 = _thread_cpu(exporter)
        time.sleep(0.5)
        idle_cpu = _thread_cpu(exporter) - cpu0
        assert conn.answered == answered  # nothing more while the client does not read
        scrape_s = _scrape_ok(exporter.port)
    print(f"\npipelining: {sent:,} of {len(data):,} bytes ({sent // len(request):,} requests) taken before the "
          f"server stopped reading, {answered:,} answered; unsent {unsent:,} B, unread {unread:,} B (page {page:,} B); RSS before "
          f"{rss.before:.1f} MB, peak {rss.peak:.1f} MB (+{rss.peak - rss.before:.1f}); endpoint thread "
          f"{idle_cpu * 1000:.1f} ms CPU in 0.5 s while stalled; another scraper answered in {scrape_s * 1000:.1f} ms; "
          f"ticks at most {ticks.late * 1000:.1f} ms late")
    assert answered < 29411 // 10  # the rest waits in the kernel's socket buffers, not in this process
    assert unsent < httpserve.MAX_UNSENT + page + 1024 and unread <= httpserve.MAX_HEAD + 65536
    assert rss.peak - rss.before < 40
    assert idle_cpu < 0.05 and ticks.late < 1
    s.settimeout(5)
    got, answers = b"", 0
    while answers < 200:  # the client reads: the waiting requests are answered, in order
        chunk = s.recv(1 << 20)
        assert chunk
        got += chunk
        answers += chunk.count(b"HTTP/1.1 200 OK\r\n")
        got = got[-64:]
    s.close()


def test_slowloris_cannot_hold_the_slots(exporter, frames, monkeypatch):
    """Issue 21 row 5: 70 connections each sending a header byte now and then held all 64 slots (each
    byte restarted the idle timeout). Now a request must arrive whole within HEAD_S of its first byte
    and a new connection takes the slot of the oldest never answered: every scrape meanwhile is
    answered, and each slow connection is closed within HEAD_S."""
    monkeypatch.setattr(httpserve, "HEAD_S", 1.0)
    slow = []
    with _RssWatch() as rss, _Ticks(exporter, frames) as ticks:
        for _ in range(70):
            s = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
            slow.append(s)
        t_end, scrapes, worst, closed = time.monotonic() + 3, 0, 0.0, set()
        while time.monotonic() < t_end:
            for i, s in enumerate(slow):
                if i not in closed:
                    try:
                        s.send(b"a")  # one byte each round: never a whole request
                    except OSError:
                        closed.add(i)
            worst = max(worst, _scrape_ok(exporter.port))
            scrapes += 1
            time.sleep(0.1)
        for i, s in enumerate(slow):  # all closed by now (HEAD_S of 1 s, or their slot taken)
            s.settimeout(2)
            try:
                tail = s.recv(4096)
                assert tail in (b"", httpserve._TIMEOUT) or tail.startswith(b"HTTP/1.1 408"), tail[:100]
                if tail:
                    assert s.recv(1) == b""
            except ConnectionResetError:
                pass
            s.close()
    print(f"\nslowloris: 70 connections, {scrapes} scrapes answered meanwhile, slowest {worst * 1000:.1f} ms; "
          f"RSS before {rss.before:.1f} MB, peak {rss.peak:.1f} MB (+{rss.peak - rss.before:.1f}); "
          f"ticks at most {ticks.late * 1000:.1f} ms late")
    assert scrapes >= 10 and worst < 2 and ticks.late < 1
    assert rss.peak - rss.before < 40
    assert len(exporter._httpd._conns) <= 1


def test_silent_connections_cannot_hold_the_slots(exporter):
    """70 connections that send nothing: the 65th onwards take the oldest's slot, a scraper too."""
    silent = [socket.create_connection(("127.0.0.1", exporter.port), timeout=5) for _ in range(70)]
    try:
        assert _scrape_ok(exporter.port) < 2
        assert len(exporter._httpd._conns) <= httpserve.MAX_CONNS
        silent[0].settimeout(2)
        assert silent[0].recv(1) == b""  # the oldest lost its slot
    finally:
        for s in silent:
            s.close()


def test_huge_headers_are_refused_with_little_read(exporter):
    """8 MB of header lines: answered 431 after MAX_HEAD (plus one read), and closed; the rest is never read."""
    with socket.create_connection(("127.0.0.1", exporter.port), timeout=5) as s, _RssWatch() as rss:
        s.settimeout(0.5)
        line, sent = b"X-Big: " + b"a" * 1000 + b"\r\n", 0
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            while sent < 8 << 20:
                s.sendall(line)
                sent += len(line)
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            pass
        s.settimeout(5)
        try:
            got = s.recv(65536)
        except ConnectionResetError:
            got = b"(reset)"
    assert got.startswith(b"HTTP/1.1 431 ") or got == b"(reset)", got[:100]
    assert sent < 8 << 20
    assert rss.peak - rss.before < 40
    assert _scrape_ok(exporter.port) < 2


# --- TLS and basic auth (Fleet II item 4), a self-signed certificate made here --------------------

@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and its key, made by the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", d / "key.pem", "-out", d / "cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    return d / "cert.pem", d / "key.pem"


@pytest.fixture
def users_file(tmp_path):
    path = tmp_path / "users"
    path.write_text("# scrapers\nprometheus:s3cret:with:colons\nother:x\n")
    path.chmod(0o600)
    return path


def _client_tls(cert) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def secured(frames, certificate, users_file):
    exporter = P.Exporter("h", port=0, tls=httpserve.tls_context(*certificate), users=httpserve.read_users(users_file))
    exporter.start()
    for frame in frames[:40]:
        exporter.on_frame(frame)
    yield exporter
    exporter.close()


def test_tls_and_basic_auth(secured, certificate):
    assert secured.url.startswith("https://127.0.0.1:")
    conn = http.client.HTTPSConnection("127.0.0.1", secured.port, timeout=5, context=_client_tls(certificate[0]))
    for headers, status in (({}, 401), (_basic("prometheus", "wrong"), 401), (_basic("nobody", "x"), 401),
                            ({"Authorization": "Bearer abc"}, 401), ({"Authorization": "Basic !!"}, 401),
                            (_basic("prometheus", "s3cret:with:colons"), 200), (_basic("other", "x"), 200)):
        conn.request("GET", "/metrics", headers=headers)  # one kept-alive TLS connection
        r = conn.getresponse()
        body = r.read()
        assert r.status == status, (headers, body[:200])
        if status == 401:
            assert r.getheader("WWW-Authenticate") == 'Basic realm="pgio-tui", charset="UTF-8"'
            assert b"pgio_" not in body
        else:
            assert b"# TYPE pgio_wal_bytes_total counter" in body
    conn.close()
    try:  # plain HTTP to the TLS port: closed (or reset), no page
        got = _raw(secured.port, b"GET /metrics HTTP/1.1\r\n\r\n")
    except ConnectionResetError:
        got = b""
    assert b"pgio_" not in got and not got.startswith(b"HTTP/")


def test_tls_pipelined_and_a_stalled_handshake(secured, certificate, monkeypatch):
    """Pipelined requests over TLS are answered in order (what the TLS layer decrypted but the
    selector cannot see is read too); a client that never finishes its handshake holds its
    connection HEAD_S at most."""
    monkeypatch.setattr(httpserve, "HEAD_S", 0.5)
    auth = b"Authorization: " + _basic("other", "x")["Authorization"].encode() + b"\r\n"
    with socket.create_connection(("127.0.0.1", secured.port), timeout=5) as raw, \
            _client_tls(certificate[0]).wrap_socket(raw, server_hostname="127.0.0.1") as s:
        s.sendall(b"GET /nothing HTTP/1.1\r\n" + auth + b"\r\n" + b"GET / HTTP/1.1\r\n" + auth + b"\r\n"
                  + b"GET /metrics HTTP/1.1\r\n" + auth + b"Connection: close\r\n\r\n")
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    assert re.findall(rb"^HTTP/1\.1 (\d+) ", got, re.M) == [b"404", b"200", b"200"], got[:300]
    n = 300  # more than MAX_UNSENT of pages: reading stops and resumes as the client reads
    with socket.create_connection(("127.0.0.1", secured.port), timeout=5) as raw, \
            _client_tls(certificate[0]).wrap_socket(raw, server_hostname="127.0.0.1") as s:
        s.sendall((b"GET /metrics HTTP/1.1\r\n" + auth + b"\r\n") * (n - 1)
                  + b"GET /metrics HTTP/1.1\r\n" + auth + b"Connection: close\r\n\r\n")
        answers, tail = 0, b""
        while chunk := s.recv(65536):
            answers += (tail + chunk).count(b"HTTP/1.1 200 OK\r\n") - tail.count(b"HTTP/1.1 200 OK\r\n")
            tail = chunk[-32:]
    assert answers == n
    with socket.create_connection(("127.0.0.1", secured.port), timeout=5) as s:
        s.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, then nothing
        t0 = time.monotonic()
        assert s.recv(1) == b""
        assert time.monotonic() - t0 < 3


@pytest.mark.parametrize("mode, content, why", [
    (0o644, "a:b\n", "readable by its owner only"),
    (0o640, "a:b\n", "readable by its owner only"),
    (0o600, "no colon\n", "line 1: not `name:password`"),
    (0o600, ":nouser\n", "line 1: not `name:password`"),
    (0o600, "# only a comment\n", "names no user"),
    (0o600, "a:" + "b" * httpserve.MAX_USERS_FILE, "larger than 65,536 bytes"),
])
def test_password_file_refused(tmp_path, mode, content, why):
    path = tmp_path / "users"
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(ValueError, match=re.escape(why)) as err:
        httpserve.read_users(path)
    assert "\n" not in str(err.value) and "b" * 100 not in str(err.value)


def test_password_file_never_through_a_symlink_or_a_fifo(tmp_path, users_file):
    (tmp_path / "link").symlink_to(users_file)
    with pytest.raises(ValueError, match="cannot read the password file"):
        httpserve.read_users(tmp_path / "link")
    os.mkfifo(tmp_path / "fifo", 0o600)
    with pytest.raises(ValueError, match="not a regular file"):
        httpserve.read_users(tmp_path / "fifo")  # O_NONBLOCK: never waits for a writer


def test_tls_files_that_do_not_load_are_one_line(tmp_path, certificate):
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    for cert, key in ((tmp_path / "missing.pem", None), (tmp_path / "junk.pem", None),
                      (certificate[0], tmp_path / "junk.pem")):
        with pytest.raises(ValueError, match="cannot load the TLS certificate") as err:
            httpserve.tls_context(cert, key)
        assert "\n" not in str(err.value)


def test_cli_options_and_a_bad_password_file_is_one_line(tmp_path):
    from pgio_tui.cli import CliError, build_parser
    from pgio_tui.commands.common import open_exporter
    path = tmp_path / "users"
    path.write_text("a:b\n")
    path.chmod(0o644)
    for command in ("serve", "record"):
        args = build_parser(command).parse_args(
            [command, "--listen", "0", "--tls-cert", "c.pem", "--auth-file", str(path)]
            + (["-o", str(tmp_path / "r.pgio")] if command == "record" else []))
        assert (args.tls_cert, args.tls_key, args.auth_file) == ("c.pem", None, str(path))
        args.tls_cert = None
        with pytest.raises(CliError, match="must be readable by its owner only"):
            open_exporter(args, sampler=None)  # refused before anything is sampled or listened on


@pytest.mark.pg
def test_a_real_prometheus_scrapes_serve_over_tls_with_basic_auth(pg_cluster, certificate, users_file, tmp_path):
    """`pgio-tui serve --tls-cert --tls-key --auth-file` against a real server, scraped by a real
    Prometheus with `scheme: https`, `basic_auth` and the certificate as its CA."""
    from prom_support import Prometheus, require_tool

    from pgio_tui.workloads.cluster import free_port
    require_tool("prometheus")
    port = free_port()
    password = tmp_path / "prom.password"
    password.write_text("s3cret:with:colons")
    serve = subprocess.Popen(
        [sys.executable, "-m", "pgio_tui", "serve", "-h", str(pg_cluster.sockdir), "-p", str(pg_cluster.port),
         "-U", "postgres", "--interval", "0.5", "--quiet", "--listen", f"127.0.0.1:{port}",
         "--tls-cert", str(certificate[0]), "--tls-key", str(certificate[1]), "--auth-file", str(users_file)],
        stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
    prom = None
    try:
        prom = Prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], job=(
            "    scheme: https\n"
            f"    basic_auth: {{username: prometheus, password_file: {password}}}\n"
            f"    tls_config: {{ca_file: {certificate[0]}}}\n"))
        for _ in range(100):  # at most 20 s
            assert serve.poll() is None, serve.stderr.read()
            if [r for r in prom.query("pgio_up") if r["value"][1] == "1"]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"never scraped: {prom.query('up')}")
        assert [r["value"][1] for r in prom.query('up{job="pgio-tui"}')] == ["1"]
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=_client_tls(certificate[0]))
        conn.request("GET", "/metrics")  # no credentials
        assert conn.getresponse().status == 401
        conn.close()
    finally:
        if prom is not None:
            prom.stop()
        serve.send_signal(signal.SIGTERM)
        _out, err = serve.communicate(timeout=30)
    assert serve.returncode == 0, err
    assert f"serving Prometheus metrics on https://127.0.0.1:{port}/metrics" in err
