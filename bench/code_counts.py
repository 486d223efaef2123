"""Three code-health counts, per package, over etrace_lint/ and rules/.

    python bench/code_counts.py

- local imports: ``import`` / ``from ... import`` inside a function body. Each
  one costs a reader a search for why it is not at the top; laziness belongs
  where a cached run, the CLI start or the pytest plugin must stay light.
- getattr/hasattr: calls of the two builtins. On our own types an attribute
  that always exists is read directly, so the type checker sees it.
- Any in signatures: ``Any`` in the parameter and return annotations of
  functions, where a real type would tell mypy and the reader more.

Only the standard library's ``ast`` is used, so the numbers come without
importing the package. tests/test_code_counts.py ratchets the same counts.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("etrace_lint", "rules")

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class Counts:
    """The three counts of one module or of a sum of modules."""

    local_imports: int = 0
    getattr_calls: int = 0
    any_in_signatures: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.local_imports + other.local_imports,
            self.getattr_calls + other.getattr_calls,
            self.any_in_signatures + other.any_in_signatures,
        )


def _local_imports(tree: ast.AST) -> int:
    """Imports anywhere below a function (each counted once, nested functions too)."""
    seen: set[int] = set()
    for function in ast.walk(tree):
        if isinstance(function, _FUNCTIONS):
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    seen.add(id(node))
    return len(seen)


def _getattr_calls(tree: ast.AST) -> int:
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
    )


def _any_in(annotation: ast.expr | None) -> int:
    """``Any`` (or ``typing.Any``) in one annotation, string annotations parsed too."""
    if annotation is None:
        return 0
    found = 0
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            found += 1
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            found += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                found += _any_in(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                pass
    return found


def _any_in_signatures(tree: ast.AST) -> int:
    found = 0
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [argument for argument in (arguments.vararg, arguments.kwarg) if argument is not None]
        found += sum(_any_in(argument.annotation) for argument in every)
        found += _any_in(function.returns)
    return found


def count_source(source: str) -> Counts:
    """The three counts of one module's source."""
    tree = ast.parse(source)
    return Counts(_local_imports(tree), _getattr_calls(tree), _any_in_signatures(tree))


def _package_of(path: Path) -> str:
    """``etrace_lint/analysis`` for a module in a subpackage, ``etrace_lint`` for a top-level module."""
    parts = path.relative_to(ROOT).parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def _modules(root: Path) -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((root / package).rglob("*.py"))


def counts_by_package(root: Path = ROOT) -> dict[str, Counts]:
    """The counts of every package under etrace_lint/ and rules/, by its path."""
    result: dict[str, Counts] = {}
    for path in _modules(root):
        package = _package_of(path)
        result[package] = result.get(package, Counts()) + count_source(path.read_text(encoding="utf-8"))
    return result


def totals(root: Path = ROOT) -> Counts:
    """The counts summed over etrace_lint/ and rules/."""
    total = Counts()
    for counts in counts_by_package(root).values():
        total += counts
    return total


def main() -> int:
    by_package = counts_by_package()
    print(f"{'package':<28} {'local imports':>14} {'getattr/hasattr':>16} {'Any in signatures':>18}")
    for package, counts in sorted(by_package.items()):
        print(f"{package:<28} {counts.local_imports:>14} {counts.getattr_calls:>16} {counts.any_in_signatures:>18}")
    total = totals()
    print(f"{'total':<28} {total.local_imports:>14} {total.getattr_calls:>16} {total.any_in_signatures:>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
