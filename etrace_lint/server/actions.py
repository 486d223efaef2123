"""Hover and code actions, from the diagnostics published for a document.

Hover shows the rule's documentation, the same text as ``etrace-lint rule
ID``. Code actions apply the rule's own fix where it has one (the edits the
rule attached to its finding, as ``--fix`` applies them), and add a
suppression comment through the helpers of ``etrace_lint.config.suppressions``
(merged with a comment already on the line), offered only when the edited
source still parses.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from lsprotocol import types

from ..cli.docs import format_rule
from ..config.suppressions import file_ignore_edit, line_with_ignore
from ..core.registry import all_rules
from .diagnostics import SOURCE

_RULE_ID = re.compile(r"ETL\d{3}")


def _rule_id(diagnostic: types.Diagnostic) -> str | None:
    """The rule of one of our diagnostics; None for another source's, or for one that is no rule's."""
    code = diagnostic.code
    return code if diagnostic.source == SOURCE and isinstance(code, str) and code in all_rules() else None


def rule_hover(diagnostics: list[types.Diagnostic], line_text: str, position: types.Position) -> types.Hover | None:
    """The documentation of the rules flagged on the hovered line, or of the rule id under the cursor."""
    rule_ids: list[str] = []
    for match in _RULE_ID.finditer(line_text):
        if match.start() <= position.character <= match.end() and match.group() in all_rules():
            rule_ids.append(match.group())
    if not rule_ids:
        rule_ids = [rule_id for d in diagnostics
                    if (rule_id := _rule_id(d)) is not None and d.range.start.line == position.line]
    rule_ids = list(dict.fromkeys(rule_ids))
    if not rule_ids:
        return None
    text = "\n\n---\n\n".join(format_rule(all_rules()[rule_id]) for rule_id in rule_ids)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def _parses_after(source: str, edited: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return True  # it did not parse before either: the edit cannot make that worse
    try:
        ast.parse(edited)
    except SyntaxError:
        return False
    return True


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _replace_line(lines: list[str], index: int, new: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(types.Position(index, 0), types.Position(index, _units(lines[index]))),
                          new_text=new)


def suppression_actions(uri: str, source: str, diagnostics: list[types.Diagnostic],
                        wanted: types.Range) -> list[types.CodeAction]:
    """"Ignore ETLxxx on this line" and "... in this file" for our diagnostics on the lines of ``wanted``."""
    lines = source.splitlines()
    actions: list[types.CodeAction] = []
    seen: set[tuple[str, int]] = set()
    file_seen: set[str] = set()
    for diagnostic in diagnostics:
        line = diagnostic.range.start.line
        rule_id = _rule_id(diagnostic)
        if rule_id is None or not wanted.start.line <= line <= wanted.end.line or line >= len(lines):
            continue
        new_line = line_with_ignore(source, line + 1, rule_id)
        if new_line is not None and (rule_id, line) not in seen:
            edited = "\n".join(lines[:line] + [new_line] + lines[line + 1:])
            if _parses_after(source, edited):
                seen.add((rule_id, line))
                actions.append(types.CodeAction(
                    title=f"Ignore {rule_id} on this line", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=types.WorkspaceEdit(changes={uri: [_replace_line(lines, line, new_line)]})))
        if rule_id not in file_seen:
            file_seen.add(rule_id)
            at, replaces, text = file_ignore_edit(source, rule_id)
            if replaces:
                edit = _replace_line(lines, at - 1, text)
            else:
                start = types.Position(at - 1, 0)
                edit = types.TextEdit(range=types.Range(start, start), new_text=text + "\n")
            actions.append(types.CodeAction(
                title=f"Ignore {rule_id} in this file", kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic], edit=types.WorkspaceEdit(changes={uri: [edit]})))
    return actions


def _position(lines: list[str], line: int, column: int) -> types.Position:
    """A 1-based line and code-point column -> an LSP position in UTF-16 units."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return types.Position(max(0, line - 1), _units(text[:max(0, column - 1)]))


def fix_actions(diagnostics: list[types.Diagnostic], wanted: types.Range,
                text_of: Callable[[str], str], uri_of: Callable[[str], str]) -> list[types.CodeAction]:
    """The fixes rules attached to the findings on the lines of ``wanted``; a safe one is preferred.

    ``text_of(path)``: the file's current text (an open document's buffer, else the disk).
    """
    actions = []
    for diagnostic in diagnostics:
        fix = (diagnostic.data or {}).get("fix") if isinstance(diagnostic.data, dict) else None
        line = diagnostic.range.start.line
        if not fix or _rule_id(diagnostic) is None or not wanted.start.line <= line <= wanted.end.line:
            continue
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in fix["edits"]:
            lines = text_of(edit["path"]).splitlines()
            changes.setdefault(uri_of(edit["path"]), []).append(types.TextEdit(
                range=types.Range(_position(lines, edit["line"], edit["column"]),
                                  _position(lines, edit["end_line"], edit["end_column"])),
                new_text=edit["replacement"]))
        safe = fix.get("applicability", "safe") == "safe"
        title = (f"Fix {diagnostic.code}: {fix['message']}"
                 + ("" if safe else " (unsafe: may change what the model computes)"))
        actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                        is_preferred=safe, edit=types.WorkspaceEdit(changes=changes)))
    return actions
