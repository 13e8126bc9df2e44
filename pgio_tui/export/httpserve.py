"""A minimal HTTP/1.1 server for the /metrics endpoint: one thread asleep in a selector between
requests, and a few microseconds per request.

http.server parses every request's headers with email.parser and runs a thread per connection;
a scraper sends one small GET per scrape on a kept-alive connection, so this reads the request
line and only the headers that matter, and hands back bytes laid out in advance (the caller
caches them). GET and HEAD; anything else is answered and the connection closed.

Anyone who can connect is untrusted (docs/security.md), so every connection is bounded:
- memory: while more than MAX_UNSENT response bytes wait for a client, its socket is not read and
  its pipelined requests wait (the kernel's buffers then hold the client back);
- time: a request (and a TLS handshake) must arrive whole within HEAD_S of its first byte, a
  response that moves no byte for STALL_S is dropped, an idle kept-alive connection lasts IDLE_S;
- slots: with MAX_CONNS open, a new connection takes the slot of the one that has waited longest
  without ever being answered (a slowloris), else of the longest idle one.
Optionally TLS (an ssl.SSLContext, tls_context()) and HTTP basic auth (read_users()).
"""

from __future__ import annotations

import base64
import email.utils
import functools
import hashlib
import hmac
import os
import selectors
import socket
import ssl
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from pgio_tui.safe_text import printable

IDLE_S = 300.0  # a kept-alive connection with no request for this long is closed
HEAD_S = 5.0  # a request line and headers (and a TLS handshake) must arrive whole within this
STALL_S = 30.0  # a response the client takes no byte of for this long is dropped
MAX_CONNS = 64  # open connections; a new one beyond takes the slot of a waiting one
MAX_HEAD = 16384  # bytes of request line + headers; more is answered 431
MAX_UNSENT = 1 << 20  # response bytes queued per connection before it is no longer read
MAX_USERS_FILE = 65536  # bytes of a basic-auth password file
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
           408: "Request Timeout", 431: "Request Header Fields Too Large", 500: "Internal Server Error"}
WANTED = {b"accept", b"accept-encoding", b"authorization", b"connection", b"content-length",
          b"transfer-encoding"}
_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_BLOCKED = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class Answer(NamedTuple):
    status: int
    ctype: str
    body: bytes
    encoding: str | None = None  # Content-Encoding of body ("gzip"), None when sent as is


Pages = Callable[[str, dict[bytes, str]], Answer]  # (path, wanted headers) -> the answer
Served = Callable[[str, float], None]  # (path, seconds from the full request read to the answer ready to send)


class _Conn:
    __slots__ = ("sock", "inbuf", "outbuf", "opened", "started", "moved", "answered", "closing", "events",
                 "handshake")

    def __init__(self, sock: socket.socket, now: float, handshake: bool):
        self.sock, self.inbuf, self.outbuf = sock, bytearray(), bytearray()
        self.opened = now
        self.started: float | None = now  # when the request being received began (None: between requests)
        self.moved = now  # when a response byte was last sent (or a request last answered)
        self.answered = 0  # requests answered so far
        self.closing = False
        self.events = 0  # what the selector watches for
        self.handshake = handshake  # a TLS handshake is under way

    def deadline(self) -> float:
        if self.outbuf:
            return self.moved + STALL_S
        if self.started is not None:
            return self.started + HEAD_S
        return self.moved + IDLE_S


class Server:
    """Listens on (host, port) at once (OSError when it cannot); `start()` serves on a daemon
    thread, `close()` stops it and closes every socket. With `tls`, connections speak TLS; with
    `users` ({name: sha256 of the password}, read_users()), every request needs basic auth."""

    def __init__(self, host: str, port: int, pages: Pages, served: Served, tls: ssl.SSLContext | None = None,
                 users: dict[str, bytes] | None = None):
        self.pages, self.served, self.tls, self.users = pages, served, tls, users
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
                timeout = None
                if self._conns:
                    timeout = max(0.0, min(c.deadline() for c in self._conns.values()) - time.monotonic())
                for key, mask in self._sel.select(timeout):
                    if key.fileobj is self.sock:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        return
                    else:
                        self._service(key.data, mask)
                if self._conns:
                    now = time.monotonic()
                    for conn in [c for c in self._conns.values() if c.deadline() <= now]:
                        self._expire(conn)
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
        if len(self._conns) >= MAX_CONNS:  # the slot of one never answered (oldest first), else the longest idle
            self._drop(min(self._conns.values(), key=lambda c: (c.answered > 0, c.outbuf != b"",
                                                                c.opened if not c.answered else c.moved)))
        sock.setblocking(False)
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError):
                sock.close()
                return
        conn = self._conns[sock] = _Conn(sock, time.monotonic(), self.tls is not None)
        self._watch(conn)

    def _drop(self, conn: _Conn) -> None:
        if self._conns.pop(conn.sock, None) is not None:
            if conn.events:
                self._sel.unregister(conn.sock)
            conn.sock.close()

    def _expire(self, conn: _Conn) -> None:
        """Past its deadline: a request still arriving is told 408 (if the socket takes it at once)."""
        if conn.inbuf and not conn.outbuf and not conn.handshake:
            try:
                conn.sock.send(_TIMEOUT)
            except OSError:
                pass
        self._drop(conn)

    def _watch(self, conn: _Conn) -> None:
        """Read only while few response bytes wait; write while any do."""
        if conn.sock not in self._conns:
            return
        events = 0 if conn.closing or len(conn.outbuf) >= MAX_UNSENT else selectors.EVENT_READ
        if conn.outbuf:
            events |= selectors.EVENT_WRITE
        if events == conn.events:
            return
        if not events:
            return self._drop(conn)  # closing, all sent
        if conn.events:
            self._sel.modify(conn.sock, events, conn)
        else:
            self._sel.register(conn.sock, events, conn)
        conn.events = events

    def _service(self, conn: _Conn, mask: int) -> None:
        if conn.handshake:
            return self._handshake(conn)
        if mask & selectors.EVENT_WRITE:
            self._flush(conn)
        if conn.sock in self._conns and len(conn.outbuf) < MAX_UNSENT:
            if conn.inbuf:  # requests that waited for the client to read
                self._requests(conn)
            # TLS: bytes already decrypted, which the selector cannot see
            tls_pending = isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending()
            if (mask & selectors.EVENT_READ or tls_pending) and len(conn.outbuf) < MAX_UNSENT:
                self._read(conn)
        self._watch(conn)

    def _handshake(self, conn: _Conn) -> None:
        assert isinstance(conn.sock, ssl.SSLSocket), "a handshake is TLS's"
        try:
            conn.sock.do_handshake()
        except ssl.SSLWantReadError:
            want = selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            want = selectors.EVENT_WRITE
        except (OSError, ValueError):  # not TLS, a bad certificate, a reset
            return self._drop(conn)
        else:
            conn.handshake = False
            self._read(conn)  # the request may have come with the handshake's last flight
            return self._watch(conn)
        if conn.events != want:
            self._sel.modify(conn.sock, want, conn)
            conn.events = want

    def _read(self, conn: _Conn) -> None:
        """What the socket has (for TLS, what it has decrypted too), then the requests it completes."""
        while True:
            try:
                data = conn.sock.recv(65536)
            except _BLOCKED:
                break
            except OSError:
                data = b""
            if not data:  # the client closed (or reset) its side
                return self._drop(conn)
            if conn.started is None:
                conn.started = time.monotonic()
            conn.inbuf += data
            if not isinstance(conn.sock, ssl.SSLSocket) or not conn.sock.pending() or len(conn.inbuf) > MAX_HEAD:
                break
        self._requests(conn)

    def _requests(self, conn: _Conn) -> None:
        """Answers the complete requests in the buffer (pipelining), in order, while few response
        bytes wait; the rest wait for the client to read."""
        while not conn.closing and len(conn.outbuf) < MAX_UNSENT and conn.sock in self._conns:
            end = conn.inbuf.find(b"\r\n\r\n")
            if end < 0:
                if len(conn.inbuf) > MAX_HEAD:
                    self._answer(conn, "", _text(431, "request header too large\n"), close=True)
                elif conn.inbuf and conn.started is None:
                    conn.started = time.monotonic()
                return
            if end > MAX_HEAD:
                self._answer(conn, "", _text(431, "request header too large\n"), close=True)
                return
            t0 = time.perf_counter()
            head = bytes(conn.inbuf[:end])
            del conn.inbuf[:end + 4]
            conn.started = None
            self._request(conn, head, t0)

    def _request(self, conn: _Conn, head: bytes, t0: float) -> None:
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].decode("latin-1").split(" ")
        except ValueError:
            self._answer(conn, "", _text(400, "bad request line\n"), close=True)
            return
        headers: dict[bytes, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                self._answer(conn, "", _text(400, "bad header line\n"), close=True)
                return
            name = name.strip().lower()
            if name in WANTED:
                headers[name] = value.strip().decode("latin-1")
        token = headers.get(b"connection", "").lower()
        close = "close" in token if version == "HTTP/1.1" else "keep-alive" not in token
        if headers.get(b"content-length", "0").strip() != "0" or b"transfer-encoding" in headers:
            self._answer(conn, "", _text(400, "a request body is not expected\n"), close=True)
            return
        if method not in ("GET", "HEAD"):
            self._answer(conn, "", _text(405, "GET or HEAD\n"), close=True)
            return
        if self.users is not None and not _authorized(self.users, headers.get(b"authorization", "")):
            self._answer(conn, "", _text(401, "pgio-tui: user name and password needed\n"), close,
                         head_only=method == "HEAD", keep_alive_1_0=version != "HTTP/1.1")
            return
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
                + ('WWW-Authenticate: Basic realm="pgio-tui", charset="UTF-8"\r\n' if status == 401 else "")
                + ("Connection: close\r\n" if close else "Connection: keep-alive\r\n" if keep_alive_1_0 else "")
                + "\r\n").encode("latin-1")
        conn.outbuf += head if head_only else head + body
        conn.closing = close
        conn.answered += 1
        conn.moved = time.monotonic()
        ready = time.perf_counter()
        self._flush(conn)
        return ready

    def _flush(self, conn: _Conn) -> None:
        """Sends what the socket takes."""
        if conn.sock not in self._conns or not conn.outbuf:
            return
        try:
            sent = conn.sock.send(conn.outbuf)
        except _BLOCKED:
            return
        except OSError:
            return self._drop(conn)
        if sent:
            del conn.outbuf[:sent]
            conn.moved = time.monotonic()


def _authorized(users: dict[str, bytes], header: str) -> bool:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        user, sep, password = base64.b64decode(token.strip(), validate=True).decode().partition(":")
    except ValueError:
        return False
    want = users.get(user)
    given = hashlib.sha256(password.encode()).digest()
    return bool(sep) and want is not None and hmac.compare_digest(given, want)


def read_users(path: str | os.PathLike) -> dict[str, bytes]:
    """The basic-auth users of a password file: `name:password` lines (`#` comments), readable by
    its owner only (like ~/.pgpass: mode 0600 or 0400, owned by this user), at most
    MAX_USERS_FILE bytes. Passwords are kept as their SHA-256. ValueError (one line) otherwise."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"cannot read the password file {printable(path)}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"the password file {printable(path)} is not a regular file")
        if st.st_mode & 0o077 or st.st_uid != os.geteuid():
            raise ValueError(f"the password file {printable(path)} must be readable by its owner only, and owned "
                             f"by this user (chmod 600 {printable(path)}); it is {stat.filemode(st.st_mode)}")
        data = f.read(MAX_USERS_FILE + 1)
    if len(data) > MAX_USERS_FILE:
        raise ValueError(f"the password file {printable(path)} is larger than {MAX_USERS_FILE:,} bytes")
    users = {}
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        user, sep, password = line.partition(":")
        if not sep or not user or not password:
            raise ValueError(f"the password file {printable(path)}, line {n}: not `name:password`")
        users[user] = hashlib.sha256(password.encode()).digest()
    if not users:
        raise ValueError(f"the password file {printable(path)} names no user")
    return users


def tls_context(cert: str | os.PathLike, key: str | os.PathLike) -> ssl.SSLContext:
    """A server context for a PEM certificate (chain) and its key: TLS 1.2 or later. ValueError
    (one line) when they cannot be loaded."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise ValueError(f"cannot load the TLS certificate {printable(cert)} and key {printable(key)}: "
                         f"{printable(why)}") from None
    return ctx


def _text(status: int, text: str) -> Answer:
    return Answer(status, "text/plain; charset=utf-8", text.encode())


@functools.lru_cache(maxsize=1)
def _http_date_of(second: int) -> str:
    return email.utils.formatdate(second, usegmt=True)


def _http_date() -> str:
    """The Date header, formatted once per second however many scrapes ask."""
    return _http_date_of(int(time.time()))
