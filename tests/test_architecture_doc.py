"""docs/architecture.md's recipes name the files a change touches today: every path they name exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|sh|md|tcss|toml)|[A-Za-z0-9_.-]+/(?:[A-Za-z0-9_.-]+/)*)`")


def recipe_paths() -> list[str]:
    text = DOC.read_text()
    recipes = text[text.index("## Recipes"):]
    return sorted({m.group(1) for m in PATH.finditer(recipes)})


def test_every_file_a_recipe_names_exists():
    paths = recipe_paths()
    assert "pgio_tui/metrics.py" in paths and "pgio_tui/sources/tick_sql.py" in paths and len(paths) > 15
    missing = [p for p in paths if not any((base / p).exists() for base in (ROOT, ROOT / "pgio_tui"))]
    assert missing == []
