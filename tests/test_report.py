"""pgio-tui report: one self-contained HTML file for one recording or a comparison of two."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from test_diff_fixtures import write_pair

from pgio_tui.analysis import latency_cdf, report, svg
from pgio_tui.cli import main
from pgio_tui.store.writer import Recorder

sys.path.insert(0, str(Path(__file__).parent))
from fixture_recording import synthetic_frames  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return write_pair(tmp_path_factory.mktemp("report"))


def assert_self_contained(html: str) -> None:
    """Nothing fetched from anywhere: no external scripts, styles, images or fonts."""
    assert not re.search(r"<(script|img|link|iframe)[^>]*\b(src|href)=", html, re.I)
    assert "@import" not in html and "url(" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace name, never fetched


def test_one_recording(pair):
    html = report.build([pair[0]])
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert_self_contained(html)
    titles = re.findall(r'aria-label="([^"]+)"', html)
    assert titles == ["checkpoint progress", "buffers written by source", "Dirty / Writeback", "device utilisation",
                      "device await", "latency", "throughput", "latency CDF"]
    assert html.count('<svg class="chart"') == 7 and 'data-x0="0"' in html
    assert "<title>checkpoint time" in html  # the checkpoint is shaded, with its kind
    assert "background threshold" in html  # Dirty's threshold drawn (200 MiB is within 2x Dirty's peak)
    assert "backend_flush_after" in html and "<h2>Summary</h2>" in html
    assert "Time axis: seconds from the workload start" in html


def test_two_recordings(pair, tmp_path, capsys):
    out = tmp_path / "cmp.html"
    assert main(["report", str(pair[0]), str(pair[1]), "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert "a.pgio vs b.pgio" in html and "What changed" in html
    assert 'stroke-dasharray="5 3"' in html  # B dashed
    row = re.search(r"<tr class=\"changed\"><td>backend</td>.*?</tr>", html).group(0)
    assert "3,000" in row and "600" in row and "-80.0 %" in row
    assert "<td>backend_flush_after</td><td>postgres</td><td>0</td><td>2MB</td>" in html
    assert "<td>host</td><td>machine</td><td>lab-a</td><td>lab-b</td>" in html


def test_report_errors(pair, tmp_path, capsys):
    out = tmp_path / "kept.html"
    out.write_text("mine")
    assert main(["report", str(pair[0]), "-o", str(out)]) == 1  # never overwritten without --force
    assert "--force" in capsys.readouterr().err and out.read_text() == "mine"
    assert main(["report", str(pair[0]), "-o", str(out), "--force"]) == 0 and "<svg" in out.read_text()
    capsys.readouterr()
    assert main(["report", str(tmp_path / "nope.pgio"), "-o", str(tmp_path / "x.html")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_an_hour_stays_small(tmp_path):
    """3600 ticks at 1 Hz with the full catalog and 4 devices: decimated, the report stays small."""
    path = tmp_path / "hour.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for f in synthetic_frames(3600, incidents=False):
            rec.write(f)
    html = report.build([path])
    assert_self_contained(html)
    assert len(html.encode()) < 300 * 1024
    for d in re.findall(r'<path d="([^"]+)"', html):  # no line has more points than decimation keeps
        assert len(re.findall(r"-?\d+ -?\d+", d)) <= 2 * svg.COLUMNS


# --- pieces --------------------------------------------------------------------------------------

def test_decimate_keeps_spikes_and_order():
    points = [(float(i), 1.0) for i in range(3600)]
    points[1234] = (1234.0, 99.0)
    points[2000] = (2000.0, -5.0)
    out = svg.decimate(points, 0, 3599, columns=100)
    assert len(out) <= 200
    assert (1234.0, 99.0) in out and (2000.0, -5.0) in out
    assert [x for x, _ in out] == sorted(x for x, _ in out)


def test_decimate_keeps_gaps():
    points = [(float(i), None if 1000 <= i < 1200 else 2.0) for i in range(3600)]
    out = svg.decimate(points, 0, 3599, columns=100)
    assert any(y is None for _, y in out)
    d = svg.path_data(out, lambda x: x / 10, lambda y: 50 - y)
    assert d.count("M") == 2  # the line breaks at the gap


def test_latency_cdf_mixture():
    one = [(1.0, 0.5), (2.0, 0.95), (3.0, 0.99), (4.0, 1.0)]
    curve = dict(latency_cdf.mixture([(1.0, one)], 4.0, points=5))  # x = 0, 1, 2, 3, 4
    assert curve == pytest.approx({0.0: 0.0, 1.0: 0.5, 2.0: 0.95, 3.0: 0.99, 4.0: 1.0})
    fast = [(0.5, 0.5), (1.0, 0.95), (1.5, 0.99), (2.0, 1.0)]
    mixed = dict(latency_cdf.mixture([(1.0, one), (3.0, fast)], 4.0, points=5))
    assert mixed[1.0] == pytest.approx((0.5 + 3 * 0.95) / 4) and mixed[2.0] == pytest.approx((0.95 + 3) / 4)


def test_time_axis_labels():
    assert svg.clock(0) == "0:00" and svg.clock(75) == "1:15" and svg.clock(3725) == "1:02:05"
    assert svg.time_step(60) == 10 and svg.time_step(3600) == 600 and svg.time_step(4 * 3600) == 1800
