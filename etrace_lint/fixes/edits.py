"""Edits on source text: apply them, show them as a unified diff, add ``import braintrace``.

Positions are those of :class:`~etrace_lint.findings.Edit`: lines 1-based,
columns 1-based code points, the end exclusive. Everything outside an edit's
range, comments and formatting included, is kept byte for byte.
"""

from __future__ import annotations

import difflib
import os

from ..findings import Edit


def _offset(lines: list[str], line: int, column: int) -> int:
    """The index in the text of (line, column); a line past the end is the end of the text."""
    if line > len(lines):
        return sum(len(text) for text in lines)
    return sum(len(text) for text in lines[:line - 1]) + column - 1


def apply_edits(text: str, edits) -> str:
    """``text`` with ``edits`` applied. Identical edits count once; overlapping ones raise ValueError."""
    lines = text.splitlines(keepends=True)
    spans = sorted({(_offset(lines, e.line, e.column), _offset(lines, e.end_line, e.end_column), e.replacement)
                    for e in edits})
    out, position = [], 0
    for start, end, replacement in spans:
        if start < position:
            raise ValueError("overlapping edits")
        out.append(text[position:start])
        out.append(replacement)
        position = end
    out.append(text[position:])
    return "".join(out)


def overlaps(first, second) -> bool:
    """Whether two groups of edits touch the same text (identical edits do not count)."""
    def key(e: Edit) -> tuple:
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


def import_edit(path: str, module, positions) -> Edit:
    """An edit adding ``import braintrace`` after the imports at the top of a libcst module
    (after its docstring and ``from __future__`` when it has no other import)."""
    import libcst as cst

    after = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        small = statement.body[0] if statement.body else None
        is_doc = isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
        if isinstance(small, (cst.Import, cst.ImportFrom)) or (is_doc and after is None):
            after = statement
            continue
        break
    line = positions[after].end.line + 1 if after is not None else 1
    return Edit(path, line, 1, line, 1, "import braintrace\n")
