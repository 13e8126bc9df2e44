"""A minimal HTTP/1.1 server for the /metrics endpoint: one thread asleep in a selector between
requests, and a few microseconds per request.

http.server parses every request's headers with email.parser and runs a thread per connection;
a scraper sends one small GET per scrape on a kept-alive connection, so this reads the request
line and only the headers that matter, and hands back bytes laid out in advance (the caller
caches them). GET and HEAD; anything else is answered and the connection closed. Slow clients
cannot stall it: sockets are non-blocking and unsent bytes wait for the socket to drain.
"""

from __future__ import annotations

import email.utils
import functools
import selectors
import socket
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from pgio_tui.safe_text import printable

IDLE_S = 300.0  # a kept-alive connection with no request for this long is closed
MAX_CONNS = 64  # beyond this many open connections, a new one is closed at once
MAX_HEAD = 16384  # bytes of request line + headers; more is answered 431
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           431: "Request Header Fields Too Large", 500: "Internal Server Error"}
WANTED = {b"accept", b"accept-encoding", b"connection", b"content-length", b"transfer-encoding"}


class Answer(NamedTuple):
    status: int
    ctype: str
    body: bytes
    encoding: str | None = None  # Content-Encoding of body ("gzip"), None when sent as is


Pages = Callable[[str, dict[bytes, str]], Answer]  # (path, wanted headers) -> the answer
Served = Callable[[str, float], None]  # (path, seconds from the full request read to the answer ready to send)


class _Conn:
    __slots__ = ("sock", "inbuf", "outbuf", "last", "closing", "writing")

    def __init__(self, sock: socket.socket):
        self.sock, self.inbuf, self.outbuf = sock, bytearray(), bytearray()
        self.last, self.closing, self.writing = time.monotonic(), False, False


class Server:
    """Listens on (host, port) at once (OSError when it cannot); `start()` serves on a daemon
    thread, `close()` stops it and closes every socket."""

    def __init__(self, host: str, port: int, pages: Pages, served: Served):
        self.pages, self.served = pages, served
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind((host, port))
            self.sock.listen(16)
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.sock, selectors.EVENT_READ)
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._conns: dict[socket.socket, _Conn] = {}
        self._thread = threading.Thread(target=self._run, name="pgio-metrics", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        if self._thread.is_alive():
            self._wake_w.send(b"x")
            self._thread.join(5)
        else:
            self._shut()

    # --- the loop -----------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                events = self._sel.select(IDLE_S if self._conns else None)
                for key, mask in events:
                    if key.fileobj is self.sock:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        return
                    else:
                        self._service(key.data, mask)
                if self._conns:
                    idle = time.monotonic() - IDLE_S
                    for conn in [c for c in self._conns.values() if c.last < idle]:
                        self._drop(conn)
        finally:
            self._shut()

    def _shut(self) -> None:
        for conn in list(self._conns.values()):
            self._drop(conn)
        for sock in (self.sock, self._wake_r, self._wake_w):
            sock.close()
        self._sel.close()

    def _accept(self) -> None:
        try:
            sock, _addr = self.sock.accept()
        except OSError:  # the client went away first, or out of descriptors: try at the next one
            return
        if len(self._conns) >= MAX_CONNS:
            sock.close()
            return
        sock.setblocking(False)
        conn = self._conns[sock] = _Conn(sock)
        self._sel.register(sock, selectors.EVENT_READ, conn)

    def _drop(self, conn: _Conn) -> None:
        if self._conns.pop(conn.sock, None) is not None:
            self._sel.unregister(conn.sock)
            conn.sock.close()

    def _service(self, conn: _Conn, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            try:
                data = conn.sock.recv(65536)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":  # the client closed (or reset) its side
                return self._drop(conn)
            if data:
                conn.last = time.monotonic()
                conn.inbuf += data
                self._requests(conn)
        self._flush(conn)

    def _requests(self, conn: _Conn) -> None:
        """Answers every complete request in the buffer (pipelining), in order."""
        while not conn.closing:
            end = conn.inbuf.find(b"\r\n\r\n")
            if end < 0:
                if len(conn.inbuf) > MAX_HEAD:
                    self._answer(conn, "", Answer(431, "text/plain; charset=utf-8", b"request header too large\n"),
                                 close=True)
                return
            t0 = time.perf_counter()
            head = bytes(conn.inbuf[:end])
            del conn.inbuf[:end + 4]
            self._request(conn, head, t0)

    def _request(self, conn: _Conn, head: bytes, t0: float) -> None:
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].decode("latin-1").split(" ")
        except ValueError:
            return self._answer(conn, "", _text(400, "bad request line\n"), close=True)
        headers: dict[bytes, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                return self._answer(conn, "", _text(400, "bad header line\n"), close=True)
            name = name.strip().lower()
            if name in WANTED:
                headers[name] = value.strip().decode("latin-1")
        token = headers.get(b"connection", "").lower()
        close = "close" in token if version == "HTTP/1.1" else "keep-alive" not in token
        if headers.get(b"content-length", "0").strip() != "0" or b"transfer-encoding" in headers:
            return self._answer(conn, "", _text(400, "a request body is not expected\n"), close=True)
        if method not in ("GET", "HEAD"):
            return self._answer(conn, "", _text(405, "GET or HEAD\n"), close=True)
        path = target.split("?", 1)[0]
        try:
            answer = self.pages(path, headers)
        except Exception as exc:  # noqa: BLE001 - a bug answers one line to the scraper, the endpoint lives on
            answer, close = _text(500, f"pgio-tui: error: {type(exc).__name__}: {printable(str(exc))}\n"), True
        ready = self._answer(conn, path, answer, close, head_only=method == "HEAD",
                             keep_alive_1_0=version != "HTTP/1.1")
        if answer.status == 200:
            self.served(path, ready - t0)

    def _answer(self, conn: _Conn, path: str, answer: Answer, close: bool, head_only: bool = False,
                keep_alive_1_0: bool = False) -> float:
        """Queues the response and sends what the socket takes; returns when it was ready to send
        (perf_counter: after the send, this thread may wait for the GIL, which is not its work)."""
        status, ctype, body, encoding = answer
        head = (f"HTTP/1.1 {status} {REASONS[status]}\r\nDate: {_http_date()}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body)}\r\n"
                + (f"Content-Encoding: {encoding}\r\n" if encoding else "")
                + ("Vary: Accept-Encoding\r\n" if path == "/metrics" else "")
                + ("Connection: close\r\n" if close else "Connection: keep-alive\r\n" if keep_alive_1_0 else "")
                + "\r\n").encode("latin-1")
        conn.outbuf += head if head_only else head + body
        conn.closing = close
        ready = time.perf_counter()
        self._flush(conn)
        return ready

    def _flush(self, conn: _Conn) -> None:
        if conn.sock not in self._conns:  # dropped
            return
        if conn.outbuf:
            try:
                del conn.outbuf[:conn.sock.send(conn.outbuf)]
            except BlockingIOError:
                pass
            except OSError:
                return self._drop(conn)
        if conn.outbuf and not conn.writing:  # the socket is full: wait until it drains
            self._sel.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
            conn.writing = True
        elif not conn.outbuf:
            if conn.closing:
                self._drop(conn)
            elif conn.writing:
                self._sel.modify(conn.sock, selectors.EVENT_READ, conn)
                conn.writing = False


def _text(status: int, text: str) -> Answer:
    return Answer(status, "text/plain; charset=utf-8", text.encode())


@functools.lru_cache(maxsize=1)
def _http_date_of(second: int) -> str:
    return email.utils.formatdate(second, usegmt=True)


def _http_date() -> str:
    """The Date header, formatted once per second however many scrapers ask."""
    return _http_date_of(int(time.time()))
