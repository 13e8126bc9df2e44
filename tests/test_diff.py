"""pgio-tui diff on two recordings with known differences (tests/test_diff_fixtures.py): figures
worked out by hand, the settings diff, the three alignments, the output formats, the CLI, the
noise judgement, and a golden markdown file."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import subprocess
import sys
import types
from pathlib import Path

import pytest
from test_diff_fixtures import T0, write_pair

from pgio_tui.analysis.align import AlignError, window
from pgio_tui.analysis.compare import compare
from pgio_tui.analysis.formats import markdown, render
from pgio_tui.analysis.noise import Estimate, judge, ratio
from pgio_tui.analysis.settings_diff import SettingChange, show
from pgio_tui.cli import main
from pgio_tui.frame import Frame
from pgio_tui.store.reader import Recording
from pgio_tui.store.writer import Recorder

GOLDEN = Path(__file__).parent / "data" / "diff" / "ab_workload.md"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return write_pair(tmp_path_factory.mktemp("diff"))


@pytest.fixture(scope="module")
def by_workload(pair):
    return compare(*pair, align="workload")


def ab(c, group, name):
    r = c.row(group, name)
    assert r is not None, f"no row {group}/{name}"
    return r.a, r.b


# --- figures by hand (workload alignment: the 30 workload ticks of each run) ---------------------

def test_latency_by_hand(by_workload):
    c = by_workload
    assert ab(c, "latency", "tps") == (100, 120)
    assert c.row("latency", "tps").change_pct == pytest.approx(20.0)
    assert ab(c, "latency", "mean") == pytest.approx((2.0, 1.6))  # (1.5 + 2.5) / 2, (1.2 + 2.0) / 2
    # pooled: mean of (sd² + m²) minus M²: A (1 + 2.25 + 1 + 6.25) / 2 - 4 = 1.25; B 2.97 - 2.56 = 0.41
    assert ab(c, "latency", "stddev") == pytest.approx((math.sqrt(1.25), math.sqrt(0.41)))
    assert ab(c, "latency", "p50") == pytest.approx((2.0, 1.6))
    assert ab(c, "latency", "p95") == pytest.approx((4.0, 3.2))
    assert ab(c, "latency", "p99") == pytest.approx((6.0, 4.8))
    assert ab(c, "latency", "max") == (250.0, 7.0)  # A's slow tick; B: 3 x 2.0 + 1
    assert ab(c, "latency", "over 100 ms") == (2, 0)
    assert ab(c, "latency", "over 200 ms") == (1, 0)
    assert ab(c, "latency", "over 500 ms") == (0, 0)
    assert c.row("latency", "over 100 ms").unit == "transactions"
    assert "latency: the launched workload, weighted by transactions" in c.notes


def test_writes_by_hand(by_workload):
    c = by_workload
    assert ab(c, "writes", "checkpointer") == (3000, 3000)  # 300/s for 10 s
    assert ab(c, "writes", "bgwriter") == (1500, 1500)
    assert ab(c, "writes", "backend") == (3000, 600)
    assert ab(c, "writes", "all sources") == (7500, 5100)
    assert ab(c, "writes", "checkpointer share") == pytest.approx((40.0, 3000 / 5100 * 100))
    assert ab(c, "writes", "backend share") == pytest.approx((40.0, 600 / 5100 * 100))
    assert ab(c, "writes", "backend fsyncs") == (2, 0)
    assert c.row("writes", "backend").change_pct == pytest.approx(-80.0)


def test_checkpoints_by_hand(by_workload):
    c = by_workload
    assert ab(c, "checkpoints", "count") == (1, 1)
    assert ab(c, "checkpoints", "count (time)") == (1, 0)
    assert ab(c, "checkpoints", "count (wal)") == (0, 1)
    assert ab(c, "checkpoints", "write mean") == (8.0, 8.0)
    assert ab(c, "checkpoints", "sync mean") == (0.6, 0.2)
    assert ab(c, "checkpoints", "total mean") == (8.7, 8.3)
    assert ab(c, "checkpoints", "buffers mean") == (3000, 3000)
    names = [r.name for r in c.groups()["checkpoints"]]
    assert names[:3] == ["count", "count (time)", "count (wal)"]


def test_memory_by_hand(by_workload):
    c = by_workload
    assert ab(c, "memory", "Dirty mean") == pytest.approx(((28 * 100 + 2 * 300) / 30, 50.0))
    # 28 x 100 then 2 x 300: rank 0.95 x 29 = 27.55 lies between 100 and 300
    assert ab(c, "memory", "Dirty p95") == pytest.approx((210.0, 50.0))
    assert ab(c, "memory", "Dirty max") == (300.0, 50.0)
    assert ab(c, "memory", "Writeback mean") == (10.0, 5.0)
    assert ab(c, "memory", "time Dirty > background threshold") == (2.0, 0.0)
    assert ab(c, "memory", "time Dirty > throttle threshold") == (0.0, 0.0)


def test_devices_compare_by_role_across_machines(by_workload):
    c = by_workload
    assert c.a.role_devices == {"PGDATA": "nvme0n1", "WAL": "nvme1n1"}
    assert c.b.role_devices == {"PGDATA": "sda", "WAL": "sdb"}
    assert ab(c, "devices", "PGDATA util mean") == pytest.approx((50.0, 40.0))  # 7k mod 5 - 2 averages 0
    assert ab(c, "devices", "PGDATA util p95") == pytest.approx((52.0, 42.0))
    assert ab(c, "devices", "PGDATA w_await mean") == (2.0, 1.0)
    assert ab(c, "devices", "PGDATA write MiB/s mean") == (1.0, 2.0)
    assert ab(c, "devices", "WAL util mean") == pytest.approx((20.0, 20.0))
    assert c.row("devices", "PGDATA util mean").metric_b == "disk.sda.util_pct"
    assert c.row("devices", "PGDATA r_await mean") is None  # no reads: no read rows


def test_verdicts(by_workload):
    c = by_workload
    assert c.row("latency", "tps").verdict == "changed"
    assert c.row("writes", "backend").verdict == "changed"
    assert c.row("devices", "PGDATA util mean").verdict == "changed"
    assert c.row("devices", "WAL util mean").verdict == "noise"  # same mean, other wiggle
    assert c.row("latency", "over 100 ms").verdict == "noise"  # 2 slow transactions in one burst
    assert c.row("latency", "max").verdict == ""  # extremes are not judged
    j = c.row("devices", "WAL util mean").judgement
    assert j.low_pct < 0 < j.high_pct


# --- settings and machine ------------------------------------------------------------------------

def test_settings_that_differ(by_workload):
    assert by_workload.settings == [
        SettingChange("postgres", "backend_flush_after", "0", "2MB"),
        SettingChange("kernel", "vm.dirty_background_ratio", "10", "5"),
        SettingChange("device", "PGDATA.scheduler", "none", "mq-deadline"),
    ]  # WAL.scheduler is the same; sdc has no PostgreSQL role; cpu.count is a machine fact
    assert by_workload.machine == [SettingChange("machine", "host", "lab-a", "lab-b"),
                                   SettingChange("machine", "cpu.count", "8", "4")]


def test_same_file_has_no_differences(pair):
    c = compare(pair[0], pair[0], "workload")
    assert c.settings == [] and c.machine == []
    assert all(r.change_pct in (None, 0.0) for r in c.rows)
    assert all(r.verdict != "changed" for r in c.rows)


def test_show_setting_units():
    assert show("256", "8kB") == "2MB" and show("0", "8kB") == "0" and show("16384", "8kB") == "128MB"
    assert show("300", "s") == "300 s" and show("on", "") == "on" and show("x", "kB") == "x kB"


# --- alignment -----------------------------------------------------------------------------------

def test_workload_alignment_windows(by_workload):
    wa, wb = by_workload.windows
    assert (wa.origin_t, wa.start_tick, wa.end_tick) == (T0 + 5, 5, 34)
    assert (wb.origin_t, wb.start_tick, wb.end_tick) == (T0 + 2, 2, 31)
    assert wa.length == wb.length == 29


def test_start_alignment_cuts_to_the_shorter_run(pair):
    c = compare(*pair, align="start")
    wa, wb = c.windows
    assert (wa.start_tick, wa.end_tick, wb.start_tick, wb.end_tick) == (0, 34, 0, 34)  # B lasts 34 s, A 37 s
    # tps over ticks 1..34 (tick 0 has no rates): 30 workload ticks in each
    assert ab(c, "latency", "tps") == pytest.approx((3000 / 34, 3600 / 34))
    # bgwriter: 5/s on the 4 idle ticks in the window, 50/s on the 30 workload ticks, in both
    assert ab(c, "writes", "bgwriter") == (1520, 1520)
    assert any(n.startswith("A: compared over 34 s of its 37 s") for n in c.notes)


def test_checkpoint_alignment(pair):
    c = compare(*pair, align="checkpoint")
    wa, wb = c.windows
    assert (wa.origin_t, wa.start_tick, wa.end_tick) == (T0 + 15, 15, 37)
    assert (wb.origin_t, wb.start_tick, wb.end_tick) == (T0 + 12, 12, 34)
    assert ab(c, "writes", "backend") == (2000, 400)  # workload ticks k = 10..29
    assert c.a.checkpoint_spans == [(0.0, 9.0, "time")]
    assert c.b.checkpoint_spans == [(0.0, 9.0, "wal")]


def test_align_errors(tmp_path):
    path = tmp_path / "plain.pgio"
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        for i in range(3):
            rec.write(Frame(tick=i, t=T0 + i, elapsed=i, dt=None if i == 0 else 1.0, values={"mem.dirty_kb": 1.0}))
    with Recording(path) as r:
        with pytest.raises(AlignError, match="no workload start"):
            window(r, "workload")
        with pytest.raises(AlignError, match="no checkpoint"):
            window(r, "checkpoint")
        assert window(r, "start").start_tick == 0


# --- formats -------------------------------------------------------------------------------------

def test_markdown_golden(by_workload):
    text = markdown(by_workload)
    if os.environ.get("PGIO_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), \
        "markdown output changed; if intended, rerun with PGIO_UPDATE_GOLDEN=1 and review the diff"


def test_csv_and_json(by_workload):
    rows = list(csv.DictReader(io.StringIO(render(by_workload, "csv"))))
    backend = next(r for r in rows if r["group"] == "writes" and r["name"] == "backend")
    assert (float(backend["a"]), float(backend["b"]), float(backend["change_pct"]), backend["verdict"]) == \
        (3000.0, 600.0, -80.0, "changed")
    assert {"group": "setting.postgres", "name": "backend_flush_after", "a": "0", "b": "2MB"}.items() <= \
        next(r for r in rows if r["name"] == "backend_flush_after").items()
    assert any(r["group"] == "machine" and r["name"] == "host" for r in rows)
    data = json.loads(render(by_workload, "json"))
    assert data["align"] == "workload" and data["a"]["devices"] == {"PGDATA": "nvme0n1", "WAL": "nvme1n1"}
    tps = next(r for r in data["rows"] if r["name"] == "tps")
    assert (tps["a"], tps["b"], tps["verdict"]) == (100.0, 120.0, "changed")
    assert data["settings"][0] == {"category": "postgres", "name": "backend_flush_after", "a": "0", "b": "2MB"}


def test_table(by_workload):
    text = render(by_workload, "table", width=110)
    assert "backend_flush_after" in text and "PGDATA.scheduler" in text
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("backend ") and "buffers" in ln)
    assert "3,000" in line and "600" in line and "-80.0 %" in line and "changed" in line


# --- command line --------------------------------------------------------------------------------

def test_cli_formats(pair, capsys):
    a, b = map(str, pair)
    assert main(["diff", a, b, "--align", "workload", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    golden = GOLDEN.read_text(encoding="utf-8")
    assert out.startswith(golden)  # the comparison, then each run's findings (analysis/findings_out.py)
    assert out[len(golden):].startswith("\n## findings\n\n- **A** backend_writes (weak): backends wrote 40.00 %")
    assert main(["diff", a, b, "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("group,name,unit,a,b,change_pct")


def test_cli_opens_the_diff_screen_without_format(pair, monkeypatch):
    seen = {}
    fake = types.ModuleType("pgio_tui.tui.diff_screen")
    fake.run_diff_screen = lambda comparison, args: seen.setdefault("c", comparison) and 0
    monkeypatch.setitem(sys.modules, "pgio_tui.tui.diff_screen", fake)
    assert main(["diff", str(pair[0]), str(pair[1]), "--align", "checkpoint"]) == 0
    assert seen["c"].align == "checkpoint" and seen["c"].row("writes", "backend").a == 2000


def test_cli_errors(pair, tmp_path, capsys):
    assert main(["diff", str(pair[0]), str(tmp_path / "missing.pgio"), "--format", "csv"]) == 1
    assert "missing.pgio: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.pgio"
    bad.write_text("not sqlite")
    assert main(["diff", str(pair[0]), str(bad), "--format", "csv"]) == 1
    assert "not a pgio-tui recording" in capsys.readouterr().err


def test_diff_never_loads_textual(pair):
    code = ("import sys; from pgio_tui.cli import main; "
            f"main(['diff', {str(pair[0])!r}, {str(pair[1])!r}, '--format', 'json']); "
            "from pgio_tui.analysis import report; "
            "bad = [m for m in sys.modules if m.split('.')[0] == 'textual']; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert r.returncode == 0, r.stderr


# --- other workloads -----------------------------------------------------------------------------

def _tiny(path: Path, kind: str, summary: dict | None, reads: float, mean: float) -> Path:
    """20 ticks of a statement-level (pg_stat_statements) latency and a workload of `kind`."""
    with Recorder(path, meta={"interval_s": 1.0}) as rec:
        wid = rec.workload_start(kind, [kind], t=T0)
        for i in range(20):
            v = {"db.blks_read_s": reads, "db.blks_hit_s": 10 * reads, "latency.mean_ms": mean + (i % 2),
                 "latency.calls_s": 50.0 + 50 * (i % 2)} if i else {}
            rec.write(Frame(tick=i, t=T0 + i, elapsed=i, dt=None if i == 0 else 1.0, values=v))
        rec.workload_stop(wid, 0, summary, t=T0 + 19)
    return path


def test_pgio_group_and_statement_latency(tmp_path):
    a = _tiny(tmp_path / "a.pgio", "pgio", {"riops": 1234, "cache_hits_s": 12340}, 1000.0, 150.0)
    b = _tiny(tmp_path / "b.pgio", "pgio", None, 1500.0, 250.0)
    c = compare(a, b, "workload")
    assert ab(c, "pgio", "RIOPS") == (1234.0, 1500.0)  # the workload's own figure, else the per-tick mean
    assert c.row("pgio", "RIOPS").note == "pgio summary / per-tick mean"
    assert ab(c, "pgio", "CACHE_HITS/s") == (12340.0, 15000.0)
    # statements weight the mean: ticks 1..19, 9 even ones with 50 calls at `mean`, 10 odd ones
    # with 100 calls at `mean + 1`
    assert ab(c, "latency", "mean") == pytest.approx((150 + 1000 / 1450, 250 + 1000 / 1450))
    # no per-transaction counts: ticks whose mean is over N ms
    assert ab(c, "latency", "ticks mean > 100 ms") == (19, 19)
    assert ab(c, "latency", "ticks mean > 200 ms") == (0, 19)
    assert "latency: server statistics, weighted by statements" in c.notes


# --- the noise judgement -------------------------------------------------------------------------

def _ar1(n: int, phi: float, seed: int, mu: float = 10.0) -> Estimate:
    rng, x, out = random.Random(seed), 0.0, []
    for _ in range(n):
        x = phi * x + rng.gauss(0, 1)
        out.append(mu + x)
    return Estimate((out, [1.0] * n), ratio)


def test_noise_finds_a_real_shift():
    assert sum(bool(judge(_ar1(600, 0.0, i), _ar1(600, 0.0, 100 + i, mu=10.3)).beyond_noise)
               for i in range(10)) == 10


def test_noise_is_not_fooled_by_autocorrelation():
    """Same mean, strongly autocorrelated ticks (a slow wander, like Dirty or a checkpoint cycle):
    single-tick resampling would call a third of these different; the blocks keep it near 5 %."""
    verdicts = [judge(_ar1(1200, 0.9, 2 * i), _ar1(1200, 0.9, 2 * i + 1)).beyond_noise for i in range(30)]
    assert sum(v is True for v in verdicts) <= 4
    assert sum(v is None for v in verdicts) <= 3


def test_noise_is_repeatable_and_declines_short_runs():
    a, b = _ar1(300, 0.3, 1), _ar1(300, 0.3, 2, mu=10.5)
    assert judge(a, b) == judge(a, b)
    assert judge(_ar1(12, 0.0, 1), _ar1(12, 0.0, 2)).beyond_noise is None  # 12 ticks: too few blocks
