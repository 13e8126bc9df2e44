"""Real Prometheus and promtool for the tests (Debian's `prometheus` package, installed by .ci/run).

Without them the tests skip with a reason; in CI (CI and PGIO_REQUIRE_PG set) they fail instead,
as the PostgreSQL fixtures do, so CI cannot pass without having run them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from pgio_tui.workloads.cluster import free_port


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        why = f"{name} is not installed (Debian package `prometheus`)"
        if os.environ.get("CI") and os.environ.get("PGIO_REQUIRE_PG"):
            pytest.fail(f"CI requires it: {why}", pytrace=False)
        pytest.skip(why)
    return path


def http_get(url: str, accept: str | None = None, timeout: float = 5) -> tuple[str, str]:
    """(content type, body) of a GET."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.headers.get("Content-Type", ""), resp.read().decode()


def promtool_check_metrics(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([require_tool("promtool"), "check", "metrics"], input=text, text=True,
                          capture_output=True, timeout=30)


class Prometheus:
    """A Prometheus server on 127.0.0.1 with a temp data dir, scraping `targets` every second."""

    def __init__(self, workdir: Path, targets: list[str], scrape_interval: str = "1s", backfill: Path | None = None,
                 job: str = ""):
        """`backfill`: an OpenMetrics file (`export --format openmetrics`) made into blocks with
        promtool in the data directory before the server starts, as docs/prometheus.md says.
        `job`: more YAML lines for the scrape job (indented 4), e.g. scheme, basic_auth, tls_config."""
        self.binary = require_tool("prometheus")
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        workdir.mkdir(parents=True, exist_ok=True)
        if backfill is not None:
            r = subprocess.run([require_tool("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(backfill),
                                str(workdir / "data")], capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
        config = workdir / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {scrape_interval}\n"
            f"  scrape_timeout: {scrape_interval}\n"
            "scrape_configs:\n"
            "  - job_name: pgio-tui\n"
            f"{job}"
            "    static_configs:\n"
            f"      - targets: {json.dumps(targets)}\n")
        self.log = open(workdir / "prometheus.log", "w")
        self.proc = subprocess.Popen(
            [self.binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited: {(self.workdir / 'prometheus.log').read_text()[-2000:]}")
            try:
                http_get(self.url + "/-/ready", timeout=1)
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("prometheus never became ready")

    def query(self, promql: str, at: float | None = None) -> list[dict]:
        return self._api("query", {"query": promql} | ({"time": f"{at:.3f}"} if at is not None else {}))

    def query_range(self, promql: str, start: float, end: float, step: float = 1.0) -> list[dict]:
        return self._api("query_range", {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                         "step": f"{step:g}"})

    def _api(self, path: str, params: dict) -> list[dict]:
        """The result, or an AssertionError with Prometheus' own error (a bad query is a 400/422)."""
        try:
            _ctype, body = http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{params['query']}: {exc.read().decode()[:500]}") from None
        doc = json.loads(body)
        assert doc["status"] == "success", doc
        return doc["data"]["result"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
