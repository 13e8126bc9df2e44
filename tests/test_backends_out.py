"""Backends out of a recording: `export --backends`, and the per-run backend rows of diff (two
runs and N) and report, on short real recordings of a throwaway cluster. Figures equal the
backends' /proc/<pid>/io deltas read independently around the work; runs are matched by backend
type and application (the pids differ); the server's text stays text."""

from __future__ import annotations

import csv
import io
import json
import shutil
import time
import uuid

import pytest

from pgio_tui.analysis.backends import backend_label
from pgio_tui.cli import main
from pgio_tui.sampler import Sampler
from pgio_tui.store.writer import Recorder

HOSTILE_APP = "=1+1 <b>bk</b> [red]x[/]"  # a formula, HTML and markup: the server keeps them as typed
WRITER, OTHER = "bk writer", HOSTILE_APP
MIB = 1 << 20


def proc_io(pid: int) -> dict[str, int]:
    """/proc/<pid>/io read and parsed here, independently of the sampler."""
    with open(f"/proc/{pid}/io") as fh:
        return {k: int(v) for k, v in (line.split(":") for line in fh if line.strip())}


def record(cluster, path, rows: dict[str, int]) -> tuple[dict[str, dict[str, int]], dict[str, int], int]:
    """A short recording: one connection per application name inserts rows[app] rows, each in a
    tick of its own, then two idle ticks. Returns app -> its backend's /proc/<pid>/io deltas over
    the recording, app -> pid, and the server's major version."""
    sampler = Sampler(cluster.conninfo(), interval=1.0)
    sampler.open()
    conns = {}
    start = time.monotonic()
    tables = {app: f"bk_{uuid.uuid4().hex[:8]}" for app in rows}
    try:
        for app in rows:
            conns[app] = cluster.connect(application_name=app)
            conns[app].execute(f"CREATE TABLE {tables[app]} (x int, pad text)")  # listed at tick 0: a baseline
        with Recorder(path, meta=sampler.meta()) as rec:
            rec.write(sampler.sample(0, 0.0))
            before = {app: proc_io(c.info.backend_pid) for app, c in conns.items()}
            tick = 0
            for app, n in rows.items():
                conns[app].execute(f"INSERT INTO {tables[app]} SELECT g, repeat('x', 200) "
                                   f"FROM generate_series(1, {n}) g")
                tick += 1
                rec.write(sampler.sample(tick, time.monotonic() - start))
            for _ in range(2):  # idle: nothing more of ours to count
                time.sleep(0.5)
                tick += 1
                rec.write(sampler.sample(tick, time.monotonic() - start))
            after = {app: proc_io(c.info.backend_pid) for app, c in conns.items()}
        major = sampler.pg.features.major
        pids = {app: c.info.backend_pid for app, c in conns.items()}
    finally:
        for c in conns.values():
            c.close()
        sampler.close()
    deltas = {app: {k: after[app][k] - before[app][k] for k in ("read_bytes", "write_bytes")} for app in rows}
    return deltas, pids, major


@pytest.fixture(scope="module")
def runs(pg_cluster, tmp_path_factory):
    """Runs A and B: the same two applications, the writes shared out the other way round."""
    d = tmp_path_factory.mktemp("backends_out")
    a = record(pg_cluster, d / "a.pgio", {WRITER: 40000, OTHER: 10000})
    b = record(pg_cluster, d / "b.pgio", {WRITER: 10000, OTHER: 40000})
    assert a[1][WRITER] != b[1][WRITER]  # other processes: pids cannot match runs
    return d / "a.pgio", a, d / "b.pgio", b


def cli(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    out, _ = capsys.readouterr()
    assert "\x1b" not in out
    return out


def test_export_backends_csv_and_json(runs, capsys):
    """One row per kept backend per tick; a backend's rate x dt over the ticks adds up to its
    /proc/<pid>/io delta; the application is plain text and never a formula."""
    path, (deltas, pids, _), *_ = runs
    rows = list(csv.DictReader(io.StringIO(cli(capsys, "export", str(path), "--backends"))))
    lines = [json.loads(line) for line in cli(capsys, "export", str(path), "--backends", "--format", "json").splitlines()]
    assert len(rows) == len(lines) > 0
    for app, pid in pids.items():
        mine = [r for r in lines if r["pid"] == pid]
        assert mine and {r["application"] for r in mine} == {app} and {r["backend_type"] for r in mine} == {"client backend"}
        for fld, key in (("write_bytes_s", "write_bytes"), ("read_bytes_s", "read_bytes")):
            assert round(sum(r[fld] * r["dt"] for r in mine)) == deltas[app][key], (app, fld)
        assert deltas[app]["write_bytes"] > 500_000  # WAL the backend wrote itself
        cells = [r for r in rows if r["pid"] == str(pid)]
        assert len(cells) == len(mine)
        assert {r["application"] for r in cells} == {app if app[0] != "=" else "'" + app}
    assert main(["export", str(path), "--backends", "--format", "openmetrics"]) == 1
    assert "--backends writes csv or json" in capsys.readouterr().err


def _figure(c, app: str, figure: str):
    return c.row("backends", f"{backend_label('client backend', app)} · {figure}")


def test_diff_compares_backends_by_type_and_application(runs):
    """Two runs: a row per kind of backend and figure, A and B each the /proc/<pid>/io delta of
    that run's own process (the pids differ), in MiB; pg figures on 18 only."""
    from pgio_tui.analysis.compare import compare
    from pgio_tui.analysis.formats import render
    a_path, (da, _, major), b_path, (db, _, _) = runs
    c = compare(a_path, b_path, "start")
    for app in (WRITER, OTHER):
        w = _figure(c, app, "dirtied")
        assert (w.a, w.b) == (pytest.approx(da[app]["write_bytes"] / MIB), pytest.approx(db[app]["write_bytes"] / MIB))
        r = _figure(c, app, "read")
        assert (r.a, r.b) == (pytest.approx(da[app]["read_bytes"] / MIB), pytest.approx(db[app]["read_bytes"] / MIB))
        assert (_figure(c, app, "pg written") is not None) == (major >= 18)
    assert any("pids differ between runs" in n for n in c.notes)
    md = render(c, "markdown")
    assert "client backend (=1+1 &lt;b>bk&lt;/b> [red]x[/]) · dirtied" in md and "<b>" not in md
    table = render(c, "table", 200)
    assert "client backend (=1+1 <b>bk</b> [red]x[/]) · dirtied" in table  # shown, never parsed as markup
    got = json.loads(render(c, "json"))
    assert {r["name"] for r in got["rows"] if r["group"] == "backends"} >= {
        f"client backend ({WRITER}) · dirtied", f"client backend ({OTHER}) · dirtied"}


def test_n_run_diff_and_report(runs, tmp_path, capsys):
    """N runs (A, B and a copy of A) give the same backend rows against the baseline; the report of
    one run lists its top backends, the two-run report compares them; HTML is escaped."""
    from pgio_tui.analysis.compare import compare_files
    a_path, (da, _, _), b_path, (db, _, _) = runs
    copy = shutil.copy(a_path, tmp_path / "a2.pgio")
    c = compare_files([a_path, b_path, copy], "start")
    row = c.row("backends", f"client backend ({WRITER}) · dirtied")
    assert row.values[0] == pytest.approx(da[WRITER]["write_bytes"] / MIB)
    assert row.values[1] == pytest.approx(db[WRITER]["write_bytes"] / MIB)
    assert row.values[2] == row.values[0]
    out = cli(capsys, "diff", str(a_path), str(b_path), str(copy), "--align", "start", "--format", "csv")
    lines = [r for r in csv.reader(io.StringIO(out)) if r and r[0] == "backends"]
    assert any(r[1] == f"client backend ({WRITER}) · dirtied" for r in lines)
    assert all(not r[1].startswith("=") for r in lines)
    for files in ([a_path], [a_path, b_path]):
        html_path = tmp_path / f"r{len(files)}.html"
        cli(capsys, "report", *map(str, files), "--align", "start", "-o", str(html_path))
        html = html_path.read_text()
        assert '<td colspan="' in html and ">backends</td>" in html
        assert f"client backend ({WRITER}) · dirtied" in html
        assert "&lt;b&gt;bk&lt;/b&gt;" in html and "<b>bk</b>" not in html


def test_summary_sums_equal_the_replayed_frames(tmp_path):
    """The summary's one GROUP BY over the file gives what replay's frames add up to (rate x dt per
    kind of backend); a file from before backends were recorded has no backend rows."""
    import sqlite3

    from fixture_recording import write_fixture

    from pgio_tui.analysis.align import window
    from pgio_tui.analysis.backends import MIB as UNIT, backend_rows
    from pgio_tui.frame import BACKEND_RATES
    from pgio_tui.store.reader import Recording
    path = write_fixture(tmp_path / "f.pgio", n=40, major=18)
    with Recording(path) as rec:
        win = window(rec, "start")
        got = {(label, figure): v for _, label, figure, _, v in backend_rows(rec, win, top=100)}
        want: dict = {}
        for f in rec.frames(win.start_tick, win.end_tick):
            for b in f.backends:
                key = backend_label(b["backend_type"], b["application"])
                for fld, figure in zip(BACKEND_RATES, ("read", "dirtied", "pg read", "pg written")):
                    if b[fld] is not None:
                        want[key, figure] = want.get((key, figure), 0.0) + b[fld] * f.dt
    assert len(got) >= 8 and got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v / UNIT, abs=1 / UNIT), k
    conn = sqlite3.connect(path)
    conn.execute("DROP VIEW backend_io_named")
    conn.execute("DROP TABLE backend_io")
    conn.commit()
    conn.close()
    with Recording(path) as rec:
        assert backend_rows(rec, window(rec, "start")) == []


def test_escape_bytes_in_a_file_stay_text(tmp_path, capsys):
    """An application name holding ESC and markup (the fixture's, as a crafted file may) leaves
    export and diff as visible escapes, never as the byte itself."""
    from fixture_recording import write_fixture
    a = write_fixture(tmp_path / "a.pgio", n=40, major=18)
    b = write_fixture(tmp_path / "b.pgio", n=40, seed=3)
    for fmt in ("csv", "json"):
        out = cli(capsys, "export", str(a), "--backends", "--format", fmt)
        assert "[red]psql[/]\\x1b[2J" in out.replace("\\\\", "\\")
    for fmt in ("markdown", "csv", "json", "table"):
        out = cli(capsys, "diff", str(a), str(b), "--format", fmt)
        if fmt == "json":
            out = "\n".join(r["name"] for r in json.loads(out)["rows"])
        assert "([red]psql[/]\\x1b[2J) · dirtied" in out.replace("\\\\", "\\"), fmt  # a table wraps the name
