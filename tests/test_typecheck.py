"""`core/` promises a strict type check: run mypy --strict over it (skipped when mypy is absent)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_core_passes_mypy_strict() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "core"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_core_imports_only_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"core", "__future__"}
    for path in sorted((REPO / "core").glob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from") and not line.startswith(" "):
                top = words[1].split(".")[0]
                assert top in allowed, f"{path.name} imports {words[1]}"
