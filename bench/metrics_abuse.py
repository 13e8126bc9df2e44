"""The /metrics endpoint under abuse (issue 21 rows 2 and 5): the resident size of a process
serving it while one client pipelines 29,411 `GET /metrics` and never reads, then while 70
connections each send a header byte now and then (slowloris) and a scraper tries every 0.2 s.

The endpoint runs in a child process (the fixture recording's ticks, no PostgreSQL needed) from
the checkout given, so two checkouts can be compared:

    python bench/metrics_abuse.py [CHECKOUT]     # default: this one

Prints figures; asserts nothing. Loopback only, each phase bounded in time.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import sys, tempfile, time
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
from fixture_recording import write_fixture
from pgio_tui.export import prometheus as P
from pgio_tui.store.reader import Recording
with Recording(write_fixture(Path(tempfile.mkdtemp()) / "f.pgio", n=80)) as rec:
    frames = list(rec.frames(0, 80))
exporter = P.Exporter("bench", port=0)
exporter.start()
for frame in frames[:40]:
    exporter.on_frame(frame)
print(exporter.port, flush=True)
time.sleep(120)
"""


def main() -> None:
    checkout = str(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1]).resolve())
    child = subprocess.Popen([sys.executable, "-c", CHILD, checkout], stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())

        def rss_mb() -> float:
            with open(f"/proc/{child.pid}/status") as f:
                return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS"))

        before = peak = rss_mb()
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.settimeout(0.2)
        data, sent = memoryview(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 29411), 0
        end = time.monotonic() + 8
        while time.monotonic() < end:
            if sent < len(data):
                try:
                    sent += s.send(data[sent:sent + 65536])
                except TimeoutError:
                    pass
            else:
                time.sleep(0.1)
            peak = max(peak, rss_mb())
        print(f"pipelining, 29,411 requests never read ({sent:,} bytes taken): RSS {before:.1f} MB before, "
              f"{peak:.1f} MB at most over 8 s")
        s.close()
        time.sleep(1)
        before = peak = rss_mb()
        slow = []
        for _ in range(70):
            try:
                c = socket.create_connection(("127.0.0.1", port), timeout=2)
                c.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
                slow.append(c)
            except OSError:
                pass
        answered = 0
        for _ in range(30):
            for c in slow:
                try:
                    c.send(b"a")
                except OSError:
                    pass
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as t:
                    t.sendall(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
                    answered += t.recv(12).startswith(b"HTTP/1.1 200")
            except OSError:
                pass
            peak = max(peak, rss_mb())
            time.sleep(0.2)
        print(f"slowloris, 70 connections for 6 s: {answered} of 30 scrapes answered; RSS {before:.1f} MB before, "
              f"{peak:.1f} MB at most")
        for c in slow:
            c.close()
    finally:
        child.kill()
        child.wait()


if __name__ == "__main__":
    main()
