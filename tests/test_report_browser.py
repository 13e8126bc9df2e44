"""The HTML reports as a real browser lays them out (headless Chromium, tests/browser.py): for one
recording, N recordings and an experiment, at a 1400 px screen and at print width, nothing is wider
than the page, every chart is drawn with a size, nothing is logged as an error, and the text can be
selected. A screenshot of each is left in the test's temp folder (printed with -s).

Skips without Chromium, unless CI is set (CI installs it: .ci/run)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from browser import Browser, chromium
from fixture_recording import write_fixture
from test_experiment_report import make_folder

from pgio_tui.cli import main

PGBENCH_STDOUT = Path(__file__).parent / "data" / "pgbench" / "pg18" / "plain.stdout"  # captured, real
WIDTHS = {"screen": 1400, "print": 696}  # print: A4 less 12.7 mm margins at 96 px per inch

OVERFLOW = """(() => {
  document.querySelectorAll("details").forEach(d => d.open = true);  // folded parts must fit as well
  const w = document.documentElement.clientWidth, out = [];
  for (const e of document.body.querySelectorAll("*")) {
    const r = e.getBoundingClientRect();
    if (r.width && (r.right > w + 0.5 || r.left < -0.5))
      out.push(`${e.tagName.toLowerCase()}.${e.className.baseVal ?? e.className} ` +
               `${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  return {width: w, page: document.documentElement.scrollWidth, wide: out.slice(0, 8), count: out.length};
})()"""
CHARTS = """[...document.querySelectorAll("svg")].map(s => {
  const r = s.getBoundingClientRect(); return [s.getAttribute("aria-label") || s.className.baseVal, r.width, r.height];
})"""
SELECTABLE = """(() => {
  const unselectable = [...document.body.querySelectorAll("*")].filter(
    e => getComputedStyle(e).userSelect === "none" && e.textContent.trim()).length;
  const sel = getSelection(); sel.selectAllChildren(document.body);
  const text = sel.toString(); sel.removeAllRanges();
  return {unselectable, chars: text.length, title: text.includes(document.querySelector("h1").textContent)};
})()"""
PRE_LINES = """[...document.querySelectorAll("pre")].map(p => p.getClientRects()[0].height /
  parseFloat(getComputedStyle(p).lineHeight || 16))"""


@pytest.fixture(scope="module")
def browser():
    binary = chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI without chromium: .ci/run installs it")
        pytest.skip("no chromium on PATH")
    b = Browser(binary)
    yield b
    b.close()


def _with_pgbench_output(path: Path) -> Path:
    """A fixture recording whose workload printed pgbench's real end-of-run summary."""
    with sqlite3.connect(path) as c:
        wid = c.execute("SELECT min(id) FROM workloads").fetchone()[0]
        t = c.execute("SELECT max(t) FROM ticks").fetchone()[0]
        c.executemany("INSERT INTO workload_output VALUES (?, ?, 'stdout', ?)",
                      [(wid, t, line) for line in PGBENCH_STDOUT.read_text().splitlines()])
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("browser")
    runs = [_with_pgbench_output(write_fixture(d / f"run{i}.pgio", n=60, seed=i, incidents=i == 0)) for i in range(3)]
    exp = d / "exp"
    make_folder(exp, {"checkpoint_completion_target": ["0.5", "0.9"], "shared_buffers": ["128MB", "1GB"]})
    out = {"one": d / "one.html", "two": d / "two.html", "three": d / "three.html", "experiment": d / "exp.html"}
    assert main(["report", str(runs[0]), "-o", str(out["one"])]) == 0
    assert main(["report", *map(str, runs[:2]), "-o", str(out["two"])]) == 0
    assert main(["report", *map(str, runs), "-o", str(out["three"])]) == 0
    assert main(["experiment", "report", str(exp), "--format", "html", "-o", str(out["experiment"])]) == 0
    return out


def test_pgbench_output_keeps_its_lines(reports):
    html = reports["one"].read_text()
    assert "\\x0a" not in html and "number of transactions actually processed" in html
    summary = html[html.index("<pre>"):html.index("</pre>")]
    assert summary.count("\n") == len(PGBENCH_STDOUT.read_text().splitlines()) - 1


@pytest.mark.parametrize("media", WIDTHS)
@pytest.mark.parametrize("kind", ["one", "two", "three", "experiment"])
def test_report_in_a_browser(browser, reports, kind, media, capsys):
    browser.errors.clear()
    browser.open(reports[kind], WIDTHS[media], media=media)
    fit = browser.evaluate(OVERFLOW)
    assert fit["count"] == 0 and fit["page"] <= fit["width"], f"wider than {fit['width']} px: {fit['wide']}"
    charts = browser.evaluate(CHARTS)
    assert len(charts) >= (3 if kind != "experiment" else 8), charts
    assert all(w > 50 and h > 20 for _, w, h in charts), [c for c in charts if not (c[1] > 50 and c[2] > 20)]
    sel = browser.evaluate(SELECTABLE)
    assert sel["unselectable"] == 0 and sel["title"] and sel["chars"] > 2000, sel
    if kind != "experiment":
        assert min(browser.evaluate(PRE_LINES)) >= 10  # pgbench's summary on its lines, not one
    assert browser.errors == []
    shot = browser.screenshot(reports[kind].with_name(f"{kind}-{media}.png"))
    assert shot.stat().st_size > 10_000
    if os.environ.get("PGIO_SCREENSHOTS"):  # to look at them: a folder to copy them to
        shutil.copy(shot, os.environ["PGIO_SCREENSHOTS"])
    with capsys.disabled():
        print(f"\n  screenshot: {shot}")
