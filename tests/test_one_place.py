"""One place per fact: metric names, formats, percentiles, thresholds, supported majors, workload defaults.

Each test here fails when a second copy of a fact appears (a metric name spelled as a string outside
the catalog, a second percentile rule, a threshold list of its own)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pgio_tui
from pgio_tui import format as fmt
from pgio_tui import metrics as M
from pgio_tui.stats import percentile

ROOT = Path(pgio_tui.__file__).parent
GROUPS = sorted({m.name.split(".")[0] for m in M.CATALOG + M.DISK_METRICS})
# A metric-shaped string: a catalog group, a dot, then a name (or the start of an f-string built on one).
METRIC_LIKE = re.compile(rf"^({'|'.join(GROUPS)})\.[a-z0-9_{{}}<>]*(\.[a-z0-9_]+)?$")
ALLOWED = {  # (file, string): not a metric name, or the one place a name is built
    ("frame.py", "disk."),  # frame.disk() builds device metric names (frame is below the catalog)
    ("sources/kernel.py", "mem.total_kb"),  # a kernel setting (machine fact), not a metric: its one definition
    # the pgio workload's options an experiment sweeps (`--set pgio.update_pct=0,50`): their one definition
    *(("experiments/plan.py", f"pgio.{o}") for o in ("update_pct", "sessions", "scale", "work_unit")),
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def metric_literals() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "metrics.py" and path.parent == ROOT:
            continue
        tree = ast.parse(path.read_text())
        skip = _docstrings(tree)
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Constant) and isinstance(n.value, str)) or id(n) in skip:
                continue
            rel = str(path.relative_to(ROOT))
            if (METRIC_LIKE.match(n.value) or n.value in M.BY_NAME) and (rel, n.value) not in ALLOWED:
                found.append(f"{rel}:{n.lineno}: {n.value!r}")
    return found


def test_no_metric_name_literal_outside_the_catalog():
    assert metric_literals() == []


def test_every_catalog_metric_has_its_constant_and_a_label_and_format():
    constants = {v for k, v in vars(M).items() if k.isupper() and isinstance(v, str)}
    for m in M.CATALOG:
        assert m.name in constants or m.name in (*M.LATENCY_OVER.values(), *M.STATEMENTS_LOG_OVER.values()), m.name
        assert m.label and callable(m.fmt)
    assert M.BY_NAME[M.MEM_DIRTY_KB].fmt(2048) == fmt.kib(2048) == "2.0M"
    assert M.BY_NAME[M.CHECKPOINT_PROGRESS].fmt(0.5) == "50%"
    assert M.lookup(M.disk("sda", M.DISK_W_AWAIT_MS)).fmt(12.345) == "12.3"
    assert {M.writes(s) for s in M.WRITE_SOURCES} <= set(M.BY_NAME)


def test_one_percentile_definition_linear_between_closest_ranks():
    assert percentile(list(range(1, 101)), 99) == 99.01  # nearest-rank would say 99
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([], 50) is None and percentile([3], 99) == 3
    from pgio_tui.analysis import noise, summary
    from pgio_tui.store import moments
    from pgio_tui.workloads import latency
    for module in (noise, summary, moments, latency):
        assert module.percentile is percentile, module.__name__
    docs = (ROOT.parent / "docs" / "metrics.md").read_text()
    assert "linear interpolation between the closest ranks" in docs


def test_one_duration_formatter():
    assert fmt.clock(59.6) == "1:00" and fmt.clock(3723) == "1:02:03" and fmt.clock(-75) == "-1:15"
    assert fmt.clock(59, hours=True) == "0:00:59"
    from pgio_tui.analysis import svg
    from pgio_tui.store import export, player
    assert svg.clock is fmt.clock and export.clock is fmt.clock and player.hms(-3) == "0:00"


def test_one_set_of_pgio_defaults_for_the_cli_the_dialog_and_the_config():
    from pgio_tui.cli import build_parser
    from pgio_tui.tui.screens.workload_dialog import PGIO_FIELDS
    from pgio_tui.workloads.launch import PGIO_DEFAULTS
    from pgio_tui.workloads.pgio_config import PgioConfig, parse_scale
    args = build_parser().parse_args(["bench", "pgio"])
    cfg = PgioConfig()
    for key, value in PGIO_DEFAULTS.items():
        assert getattr(args, key) == value, key
        assert getattr(cfg, key) == (parse_scale(value) if key == "scale" else value), key
    assert {k: d for k, _label, d, _hint in PGIO_FIELDS} == {k: str(PGIO_DEFAULTS[k]) for k, *_ in PGIO_FIELDS}
    assert dict((k, d) for k, _l, d, _h in PGIO_FIELDS)["sessions"] == "1"  # was 2 in the dialog, 1 on the CLI


def test_one_list_of_supported_majors_and_the_matrix_pins_cover_it():
    from pgio_tui.sources.pgfeatures import SUPPORTED_MAJORS
    assert SUPPORTED_MAJORS == tuple(range(13, 19))
    script = (ROOT.parent / "scripts" / "pg-matrix.sh").read_text()
    for pins in re.findall(r"declare -A \w+=\((.*)\)", script):
        assert tuple(sorted(int(m) for m in re.findall(r"\[(\d+)\]=", pins))) == SUPPORTED_MAJORS
    assert "SUPPORTED_MAJORS" in script and '"13 14 15 16 17 18"' not in script
