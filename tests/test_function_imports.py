"""An import inside a function says why it is not at the top of its module.

Laziness is the point only in a few places (a cached run must not import JAX, an
optional dependency, an import circle that cannot be broken otherwise); each such
import carries its reason as a comment on its own line or on the line above it.
ruff's PLC0415 finds these imports too, but its ``noqa`` does not ask for a reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "etrace_lint"


def _unexplained(source: str) -> list[int]:
    """The lines of the function-level imports of ``source`` that give no reason."""
    lines = source.splitlines()
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            own = lines[node.lineno - 1]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            if "#" not in own and not above.startswith("#"):
                found.append(node.lineno)
    return sorted(set(found))


def test_every_import_inside_a_function_says_why():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, PACKAGE
    missing = []
    for path in modules:
        relative = path.relative_to(PACKAGE).as_posix()
        missing += [f"etrace_lint/{relative}:{line}" for line in _unexplained(path.read_text())]
    assert not missing, "imports inside functions without a reason:\n" + "\n".join(missing)


def test_an_import_without_a_reason_is_found():
    source = (
        "import os\n"
        "\n"
        "def explained_on_its_line():\n"
        "    import jax  # a cached run must not import JAX\n"
        "\n"
        "def explained_above():\n"
        "    # an import circle: the writers import this module\n"
        "    from . import writers\n"
        "\n"
        "class Holder:\n"
        "    def method(self):\n"
        "        import json\n"
        "        return json\n"
    )
    assert _unexplained(source) == [12]
