"""The catalog under Prometheus names: conventions, bounded labels, totals that rate() turns back into
the recorded rates, and the endpoint's format (promtool check metrics, OpenMetrics on negotiation)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prom_support import http_get, promtool_check_metrics

from pgio_tui.export.prometheus import Exporter, ListenError, parse_listen
from pgio_tui.export.grafana import dashboard
from pgio_tui.export.promnames import FAMILIES, Converter, exposed_names, markdown, server_label
from pgio_tui.metrics import BY_NAME, DISK_METRICS
from pgio_tui.frame import Frame
from pgio_tui.store.reader import Recording

BOUNDED_LABELS = {"server", "device", "role", "backend_type", "kind", "threshold", "wait_event_type", "wait_event",
                  "le", "object", "context"}  # pg_stat_io's objects and contexts: a handful each


def test_names_follow_prometheus_conventions():
    for fam in FAMILIES.values():
        assert re.fullmatch(r"pgio_[a-z0-9_]+", fam.name), fam.name
        assert not fam.name.endswith("_total"), fam.name
        assert not re.search(r"_(ms|kb|pct|s)$|_(ms|kb|pct)_", fam.name), f"{fam.name}: not a base unit"
        assert fam.unit == "" or fam.name.endswith("_" + fam.unit)
        assert fam.sample_name == (fam.name + "_total" if fam.type == "counter" else fam.name)


def test_every_catalog_metric_with_a_number_has_a_prometheus_name(fixture_file):
    from pgio_tui.export.promnames import DISK_RULES, RULES
    from pgio_tui.metrics import LATENCY_OVER
    mapped = {r.metric for r in RULES} | {"checkpoint.kind"} | set(LATENCY_OVER.values())  # histogram buckets
    assert set(BY_NAME) <= mapped, set(BY_NAME) - mapped
    assert {r.metric for r in DISK_RULES} == {m.name.rsplit(".", 1)[1] for m in DISK_METRICS}


def test_totals_sum_the_recorded_rates_and_gauges_are_in_base_units(fixture_file):
    with Recording(fixture_file) as rec:
        frames = list(rec.frames())
        conv = Converter(server_label(rec.meta))
        wal = checkpointer = dev_bytes = fsync_s = read_bytes = 0.0
        wal_row = (("backend_type", "client backend"), ("object", "wal"), ("context", "normal"))
        scan_row = (("backend_type", "client backend"), ("object", "relation"), ("context", "bulkread"))
        for frame in frames:
            samples = {(f.sample_name, labels): v for f, labels, v in conv.update(frame)}
            if frame.dt:  # the first tick has no rates yet
                wal += frame.values.get("wal.bytes_s", 0) * frame.dt
                checkpointer += frame.values.get("writes.checkpointer", 0) * frame.dt
                dev_bytes += frame.devices["nvme0n1"]["wkb_s"] * 1024 * frame.dt
                row = frame.io.get(("client backend", "wal", "normal"), {})
                fsync_s += (row.get("fsync_ms") or 0) / 1000 * frame.dt
                row = frame.io.get(("client backend", "relation", "bulkread"), {})
                read_bytes += (row.get("read_kb") or 0) * 1024 * frame.dt
            server = ("server", "fixture-host")
            if wal:
                assert samples[("pgio_wal_bytes_total", (server,))] == pytest.approx(wal, rel=1e-12)
                assert samples[("pgio_buffers_written_total", (server, ("backend_type", "checkpointer")))] \
                    == pytest.approx(checkpointer, rel=1e-12)
                assert samples[("pgio_disk_written_bytes_total", (server, ("device", "nvme0n1")))] \
                    == pytest.approx(dev_bytes, rel=1e-12)
            if fsync_s:  # pg_stat_io by row: labelled backend_type, object, context; in seconds and bytes
                assert samples[("pgio_stat_io_fsync_seconds_total", (server, *wal_row))] == pytest.approx(fsync_s,
                                                                                                         rel=1e-12)
            if read_bytes:
                assert samples[("pgio_stat_io_read_bytes_total", (server, *scan_row))] == pytest.approx(read_bytes,
                                                                                                      rel=1e-12)
            assert samples[("pgio_mem_dirty_bytes", (server,))] == frame.values["mem.dirty_kb"] * 1024
            await_ms = frame.devices.get("nvme1n1", {}).get("w_await_ms")
            assert samples.get(("pgio_disk_write_await_seconds", (server, ("device", "nvme1n1")))) \
                == (None if await_ms is None else pytest.approx(await_ms / 1000, rel=1e-12))
            assert samples[("pgio_up", (server,))] == 1.0
            roles = {(dict(labels)["device"], dict(labels)["role"]) for name, labels in samples
                     if name == "pgio_disk_role_info"}
            assert roles == {(d, frame.device_roles.get(d, "none")) for d in frame.devices}
            for name, labels in samples:
                assert {k for k, _ in labels} <= BOUNDED_LABELS, (name, labels)
        assert wal > 0 and checkpointer > 0 and fsync_s > 0 and read_bytes > 0


def test_a_device_with_two_roles_is_two_role_series_and_its_figures_once():
    """Labels hold one value: pg_wal on PGDATA's device is role data and role wal, never "data,wal"."""
    frame = Frame(1, 1.0, 1.0, 1.0)
    frame.devices = {"vda": {"wkb_s": 100.0, "util_pct": 50.0}, "vdb": {"wkb_s": 1.0}}
    frame.device_roles = {"vda": "data,wal"}
    samples = [(f.sample_name, dict(labels), v) for f, labels, v in Converter("h:5432").update(frame)]
    assert sorted((lab["device"], lab["role"]) for name, lab, _ in samples if name == "pgio_disk_role_info") \
        == [("vda", "data"), ("vda", "wal"), ("vdb", "none")]
    util = [(lab, v) for name, lab, v in samples if name == "pgio_disk_utilization_ratio"]
    assert util == [({"server": "h:5432", "device": "vda"}, 0.5)]
    assert all("," not in value for _, lab, _ in samples for value in lab.values())


@pytest.fixture
def endpoint(fixture_file):
    exporter = Exporter("fixture-host:5432", port=0)
    url = exporter.start()
    with Recording(fixture_file) as rec:
        for frame in rec.frames(0, 60):
            exporter.on_frame(frame)
    yield exporter, url, fixture_file
    exporter.close()


def exporter_fixture(endpoint):
    return endpoint[2]


def test_scrape_passes_promtool_check_metrics(endpoint):
    _exporter, url, _file = endpoint
    ctype, text = http_get(url)
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    for name in ("pgio_up", "pgio_wal_bytes_total", "pgio_disk_utilization_ratio", "pgio_mem_dirty_bytes",
                 "pgio_latency_p99_seconds", "pgio_wait_sessions", "pgio_checkpoint_info"):
        assert re.search(rf"^{name}{{", text, re.M), name
    assert "# TYPE pgio_wal_bytes_total counter" in text
    r = promtool_check_metrics(text)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr
    exporter, _url, _file = endpoint
    with Recording(exporter_fixture(endpoint)) as rec:
        exporter.on_frame(rec.frame(61))
    _ctype, again = http_get(url)  # the next tick's page reports the first scrape's duration
    m = re.search(r"^pgio_exporter_last_scrape_duration_seconds (\S+)$", again, re.M)
    assert m and 0 < float(m.group(1)) < 1


def test_openmetrics_on_negotiation(endpoint):
    _exporter, url, _file = endpoint
    ctype, text = http_get(url, accept="application/openmetrics-text; version=1.0.0; charset=utf-8")
    assert ctype.startswith("application/openmetrics-text"), ctype
    assert text.endswith("# EOF\n")
    assert "# TYPE pgio_wal_bytes counter\n# UNIT pgio_wal_bytes bytes\n" in text
    assert re.search(r'^pgio_wal_bytes_total\{server="fixture-host:5432"\} \S+$', text, re.M)


def test_before_the_first_tick_only_up_is_zero():
    exporter = Exporter("h:1", port=0)
    url = exporter.start()
    try:
        _ctype, text = http_get(url)
    finally:
        exporter.close()
    assert re.findall(r"^(pgio_\w+)", text, re.M) == ["pgio_up", "pgio_exporter_last_scrape_duration_seconds",
                                                      "pgio_exporter_cpu_seconds_total"]
    assert 'pgio_up{server="h:1"} 0.0' in text and "pgio_exporter_last_scrape_duration_seconds NaN" in text


@pytest.mark.parametrize("text, want", [
    ("9808", ("127.0.0.1", 9808)), (":9808", ("127.0.0.1", 9808)), ("0.0.0.0:9808", ("0.0.0.0", 9808)),
    ("[::1]:9808", ("::1", 9808)), ("localhost:0", ("localhost", 0))])
def test_listen_defaults_to_localhost(text, want):
    assert parse_listen(text) == want


@pytest.mark.parametrize("text", ["", "x", "99999", "::1:9808", "host:", "-1"])
def test_listen_refuses_nonsense(text):
    with pytest.raises(ListenError, match="--listen"):
        parse_listen(text)


def test_port_in_use_is_one_line():
    first = Exporter("h", port=0)
    first.start()
    try:
        with pytest.raises(ListenError, match=rf"cannot listen on 127.0.0.1:{first.port}: .*in use"):
            Exporter("h", port=first.port).start()
    finally:
        first.close()


ROOT = Path(__file__).resolve().parent.parent


def test_dashboard_file_is_generated_from_the_names():
    board = dashboard()
    assert json.loads((ROOT / "docs/grafana/pgio-tui.json").read_text()) == board, \
        "run: python -m pgio_tui.export.grafana > docs/grafana/pgio-tui.json"
    names = set(re.findall(r"\bpgio_\w+", json.dumps(board)))
    assert names and names <= set(exposed_names()), names - set(exposed_names())
    assert {v["name"] for v in board["templating"]["list"]} >= {"instance", "device"}
    titles = " ".join(p["title"] for p in board["panels"])
    for pane in ("Checkpoint", "Buffers written", "Dirty", "Devices", "Latency", "Waits"):
        assert pane in titles
    annotation = board["annotations"]["list"][0]
    assert "expr" not in annotation and "pgio_checkpoint_active" in annotation["target"]["expr"]  # Grafana's current form
    assert board["schemaVersion"] == 42
    (ds,) = board["__inputs"]  # the import asks for the data source; the variable starts on it
    assert ds["pluginId"] == "prometheus" and f"${{{ds['name']}}}" in json.dumps(board["templating"])


def test_docs_list_every_prometheus_name():
    assert markdown() in (ROOT / "docs/prometheus.md").read_text(), \
        "paste `python -m pgio_tui.export.promnames` into docs/prometheus.md"


@pytest.mark.parametrize("accept", [None, "application/openmetrics-text; version=1.0.0; charset=utf-8"])
def test_page_is_prometheus_clients_own_rendering(fixture_file, accept):
    """Each family's header and each series are laid out once and filled per tick: the page must be
    byte for byte what prometheus-client renders for the same samples, as series come and go
    (checkpoints, waits, a gap, devices appearing)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.exposition import choose_encoder

    from pgio_tui.export.prometheus import CPU, _Samples, _scrape_sample
    exporter = Exporter("fixture-host", port=0)  # not started: pages are built without HTTP
    reference = Converter("fixture-host")
    encoder, _ctype = choose_encoder(accept or "")
    series = set()
    with Recording(fixture_file) as rec:
        for frame in rec.frames(0, 120):
            exporter.on_frame(frame)
            samples = reference.update(frame) + [_scrape_sample(float("nan")), (CPU, (), 0.0)]
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_Samples(samples))
            assert exporter.page(accept)[0] == encoder(registry), frame.tick
            series.add(tuple(labels for family, labels, _v in samples if family.name == "pgio_wait_sessions"))
    assert len(series) > 3  # the series did change


def test_the_server_label_names_a_machine_not_a_socket():
    """A server reached by a unix socket or loopback is the client's machine (naming.machine_of)."""
    assert server_label({"host": "/var/run/postgresql", "port": 5432, "client_host": "db1"}) == "db1:5432"
    assert server_label({"host": "127.0.0.1", "port": 5433, "client_host": "db1"}) == "db1:5433"
    assert server_label({"host": "db2.example.net", "port": 5432, "client_host": "mon"}) == "db2.example.net:5432"
