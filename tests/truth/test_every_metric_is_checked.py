"""Every catalog metric is checked against its reference by the truth suite (issue 22).

Each module of tests/truth declares `CHECKS = {metric name: reference kind}` (kinds as
`metrics.REFERENCE_KINDS` names them; per-statement, per-backend, per-device and per-backend-type
metrics by their template name, `statement.<queryid>.calls_s`). A catalog metric counts as checked
when some module checks it under the catalog's own kind for it (`Metric.reference.kind`); a derived
metric's inputs must all be catalog metrics with references of their own. Keys that are not catalog
metrics (a summary's figures, an experiment's flags) are allowed: they check more, never less.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pgio_tui import metrics as M

HERE = Path(__file__).resolve().parent
ALL = (*M.CATALOG, *M.STATEMENT_METRICS, *M.BACKEND_METRICS, *M.DISK_METRICS, *M.SOURCE_METRICS, *M.IO_METRICS)



def _checks() -> dict[str, set[tuple[str, str]]]:
    """metric -> {(reference kind, module)} over every module of tests/truth."""
    out: dict[str, set[tuple[str, str]]] = {}
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        spec = importlib.util.spec_from_file_location(f"truth_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        checks = getattr(module, "CHECKS", None)
        assert isinstance(checks, dict) and checks, f"{path.name} declares no CHECKS"
        for name, kind in checks.items():
            assert kind in M.REFERENCE_KINDS, f"{path.name}: {name} checked against unknown kind {kind!r}"
            out.setdefault(name, set()).add((kind, path.name))
    return out


def test_every_metric_names_its_reference():
    missing = [m.name for m in ALL if m.reference is None or m.reference.kind not in M.REFERENCE_KINDS]
    assert not missing, f"metrics without a reference: {missing}"


def test_every_metric_is_checked_against_its_reference():
    checks = _checks()
    unchecked = [f"{m.name} ({m.reference.kind})" for m in ALL
                 if m.reference.kind not in {kind for kind, _ in checks.get(m.name, ())}]
    assert not unchecked, f"{len(unchecked)} metrics with no check of their reference kind: {unchecked}"


def test_derived_metrics_are_made_of_referenced_metrics():
    by_name = {m.name: m for m in ALL}
    for m in ALL:
        if m.reference.kind != "derived":
            continue
        assert m.reference.of, f"{m.name} is derived from nothing"
        for part in m.reference.of:
            assert part in by_name, f"{m.name} is derived from {part}, not a catalog metric"
            assert part != m.name, f"{m.name} is derived from itself"
            assert by_name[part].reference is not None, f"{m.name} is derived from {part}, which has no reference"
