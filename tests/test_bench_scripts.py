"""The benchmarks under bench/ are run by hand, not by the suite: what they import of etrace-lint must exist."""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"


def _imported_names(path: pathlib.Path) -> list[tuple[int, str, str]]:
    """(line, module, name) of every ``from etrace_lint... import name`` in the script, local imports too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("etrace_lint"):
            found.extend((node.lineno, node.module or "", alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_what_a_benchmark_imports_of_etrace_lint_exists(script: pathlib.Path) -> None:
    missing = []
    for line, module, name in _imported_names(script):
        imported = importlib.import_module(module)
        if not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError:
                missing.append(f"{script.name}:{line}: {module}.{name}")
    assert not missing
