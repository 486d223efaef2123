"""Edits on source text: apply them, show them as a unified diff, add ``import braintrace``.

Positions are those of :class:`~etrace_lint.core.findings.Edit`: lines 1-based,
columns 1-based code points, the end exclusive. Everything outside an edit's
range, comments and formatting included, is kept byte for byte.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Iterable, Mapping

from ..core.findings import Edit

if TYPE_CHECKING:  # libcst loads only when a fix is asked for; annotations only
    import libcst as cst
    from libcst.metadata import CodeRange


def _offset(lines: list[str], line: int, column: int) -> int:
    """The index in the text of (line, column); a line past the end is the end of the text."""
    if line > len(lines):
        return sum(len(text) for text in lines)
    return sum(len(text) for text in lines[:line - 1]) + column - 1


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` applied. Identical edits count once; overlapping ones raise ValueError."""
    lines = text.splitlines(keepends=True)
    spans = sorted({(_offset(lines, e.line, e.column), _offset(lines, e.end_line, e.end_column), e.replacement)
                    for e in edits})
    out: list[str] = []
    position = 0
    for start, end, replacement in spans:
        if start < position:
            raise ValueError("overlapping edits")
        out.append(text[position:start])
        out.append(replacement)
        position = end
    out.append(text[position:])
    return "".join(out)


def overlaps(first: Iterable[Edit], second: Collection[Edit]) -> bool:
    """Whether two groups of edits touch the same text (identical edits do not count)."""
    def key(e: Edit) -> tuple[tuple[int, int], tuple[int, int]]:
        return (e.line, e.column), (e.end_line, e.end_column)
    for a in first:
        for b in second:
            if a == b:
                continue
            (a0, a1), (b0, b1) = key(a), key(b)
            if a0 < b1 and b0 < a1 or (a0 == a1 == b0 == b1):
                return True
    return False


def unified_diff(path: str, before: str, after: str, root: str) -> str:
    """``git diff``-style text of one file's change, paths relative to ``root``."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if rel.startswith(".."):
        rel = path
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{rel}", f"b/{rel}"))


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
    import libcst as cst  # libcst loads only when a fix is asked for

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
