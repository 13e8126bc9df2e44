"""The import contracts in pyproject.toml ([tool.importlinter]): layers point down only
(cli -> commands -> tui | headless -> session -> analysis : workloads : store -> interfaces ->
sampler -> sources -> frame : metrics : errors : secrets : safe_text) and Textual only under pgio_tui.tui.

import-linter reads the static import graph, imports inside functions included, so a lazy
`from pgio_tui.tui... import` in the core is caught too. Each run is a fresh interpreter on a
given tree, so nothing imported by other tests can hide an import.
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pgio_tui

ROOT = Path(__file__).resolve().parent.parent
LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
TOP_OF_THE_TUI = {"pgio_tui.tui", "pgio_tui.commands", "pgio_tui.cli", "pgio_tui.__main__"}  # may reach Textual


def lint(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-c", LINT], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_layers_hold():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Contracts: 3 kept, 0 broken." in r.stdout


def test_a_lower_layer_reaching_the_tui_breaks_them(tmp_path):
    """The contracts can fail: a copy of the tree where a workload module imports the TUI."""
    shutil.copytree(ROOT / "pgio_tui", tmp_path / "pgio_tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "pgio_tui" / "store" / "player.py", "a") as f:
        f.write("\n\ndef _show(rec):\n    from pgio_tui.tui.replay import ReplayApp\n    return ReplayApp(rec)\n")
    r = lint(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Layers point down only BROKEN" in r.stdout
    assert "Textual only under pgio_tui.tui: the core never reaches it BROKEN" in r.stdout
    assert "pgio_tui.store.player -> pgio_tui.tui.replay" in r.stdout


def top_modules() -> set[str]:
    return {f"pgio_tui.{m.name}" for m in pkgutil.iter_modules(pgio_tui.__path__)}


def test_every_module_has_a_layer():
    """A new module or package must be placed in [tool.importlinter]'s layers, or nothing checks it."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layered = set(re.findall(r"pgio_tui\.\w+", " ".join(contracts[0]["layers"])))
    missing = top_modules() - layered - {"pgio_tui.__main__"}
    assert not missing, f"give {sorted(missing)} a layer in pyproject.toml [tool.importlinter] (docs/architecture.md)"


def test_no_core_module_reaches_textual():
    """The forbidden contract lists the core modules by name; this also covers ones added since."""
    import grimp
    graph = grimp.build_graph("pgio_tui", include_external_packages=True, cache_dir=None)
    core = sorted(top_modules() - TOP_OF_THE_TUI)
    assert "pgio_tui.sampler" in core and "pgio_tui.store" in core
    reach = [m for m in core if graph.chain_exists(importer=m, imported="textual", as_packages=True)]
    assert not reach, [graph.find_shortest_chain(importer=m, imported="textual", as_packages=True) for m in reach]
