"""Edits on source text: apply them, and show them as a unified diff.

Positions are those of :class:`~etrace_lint.core.findings.Edit`: lines 1-based,
columns 1-based code points, the end exclusive. Everything outside an edit's
range, comments and formatting included, is kept byte for byte.
"""

from __future__ import annotations

import difflib
import os
from typing import Collection, Iterable

from ..core.findings import Edit


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
