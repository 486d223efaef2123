"""Where a fix adds ``import braintrace``: where isort and ruff's ``I001`` would sort it.

Read from the file's concrete syntax (libcst), through :class:`~.source.ParsedSource`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange

from ..core.findings import Edit


@dataclass(frozen=True)
class _TopImport:
    """One import statement at the top of a module, as isort sorts it."""

    first_line: int  # its first line, comments above it included
    last_line: int
    module: str  # the module imported (``jax.numpy``; ``.x`` for a relative import)
    straight: bool  # ``import x`` rather than ``from x import y``
    section: str  # future, stdlib, thirdparty or firstparty
    new_block: bool  # a blank line before it


def _section(module: str, folder: str) -> str:
    """isort's section of a module: a module beside the file is the project's own (first party)."""
    top = module.split(".")[0]
    if module.startswith(".") or os.path.exists(os.path.join(folder, f"{top}.py")) or \
            os.path.isdir(os.path.join(folder, top)):
        return "firstparty"
    if top == "__future__":
        return "future"
    return "stdlib" if top in sys.stdlib_module_names else "thirdparty"


def _top_imports(path: str, module: cst.Module,
                 positions: Mapping[cst.CSTNode, CodeRange]) -> tuple[list[_TopImport], int]:
    """The imports at the top of the module, and the line after its docstring (1 without one)."""
    def dotted(node: cst.BaseExpression) -> str:
        if isinstance(node, cst.Attribute):
            return f"{dotted(node.value)}.{node.attr.value}"
        return node.value if isinstance(node, cst.Name) else ""

    found: list[_TopImport] = []
    after_docstring = 1
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
            break
        small = statement.body[0]
        where = positions[statement]
        if index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                                   cst.ConcatenatedString)):
            after_docstring = where.end.line + 1
            continue
        if isinstance(small, cst.Import):
            name, straight = dotted(small.names[0].name), True
        elif isinstance(small, cst.ImportFrom):
            name = "." * len(small.relative) + (dotted(small.module) if small.module is not None else "")
            straight = False
        else:
            break
        comments = sum(1 for line in statement.leading_lines if line.comment is not None)
        blank = any(line.comment is None for line in statement.leading_lines)
        found.append(_TopImport(where.start.line - comments, where.end.line, name, straight,
                                _section(name, os.path.dirname(path)), blank or not found))
    return found, after_docstring


def import_edit(path: str, module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange]) -> Edit:
    """An edit adding ``import braintrace`` where isort and ruff's ``I001`` would put it.

    In the block of third-party imports (the one with the most, when blank
    lines split them into several), among the ``import x`` statements in
    alphabetical order and before the ``from x import y`` ones, as isort
    sorts by default. A file with no third-party import gets a block of its
    own after its standard-library (or ``__future__``) imports; a file with no
    import at all gets it after its docstring.
    """
    imports, after_docstring = _top_imports(path, module, positions)
    blocks: list[list[_TopImport]] = []
    for item in imports:
        if item.new_block or not blocks:
            blocks.append([])
        blocks[-1].append(item)
    third = [block for block in blocks if any(item.section == "thirdparty" for item in block)]
    if third:
        block = max(third, key=lambda b: sum(item.section == "thirdparty" for item in b))
        party = [item for item in block if item.section == "thirdparty"]
        later = [item for item in party if (not item.straight) or item.module.lower() > "braintrace"]
        line = later[0].first_line if later else party[-1].last_line + 1
        return Edit(path, line, 1, line, 1, "import braintrace\n")
    earlier = [block for block in blocks if block[0].section in ("future", "stdlib")]
    if earlier:
        line = earlier[-1][-1].last_line + 1
        return Edit(path, line, 1, line, 1, "\nimport braintrace\n")
    if blocks:  # only the project's own imports: a block before them
        line = blocks[0][0].first_line
        return Edit(path, line, 1, line, 1, "import braintrace\n\n")
    return Edit(path, after_docstring, 1, after_docstring, 1, "import braintrace\n")
