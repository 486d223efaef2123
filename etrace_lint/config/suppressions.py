"""In-source suppressions: ``# noqa: ETL005``, ``# etrace-lint: ignore[ETL005]`` and the
file-level ``# etrace-lint: file-ignore[ETL005]``.

A bare ``# noqa`` silences every finding on its line (flake8's meaning); codes
that are not etrace-lint's (``F401``) are left to their tools.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*etrace-lint:\s*ignore\[(?P<codes>[^\]]*)\]")
_FILE_IGNORE = re.compile(r"#\s*etrace-lint:\s*file-ignore\[(?P<codes>[^\]]*)\]")
OWN_PREFIX = "ETL"


def _codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(c.upper() for c in re.split(r"[,\s]+", text.strip()) if c)


@dataclass
class Suppression:
    line: int
    column: int
    codes: tuple[str, ...]  # empty: every code
    form: str  # "noqa", "ignore" or "file-ignore"
    used: set[str] = field(default_factory=set)

    def covers(self, rule_id: str) -> bool:
        return not self.codes or any(rule_id.startswith(code) for code in self.codes)


def _comments(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, comment) for each comment; ``#`` inside strings is not a comment."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.start[1], token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        # a file that does not tokenize has no targets; still read what we can
        for number, line in enumerate(text.splitlines(), start=1):
            if "#" in line:
                yield number, line.index("#"), line[line.index("#"):]


def parse_suppressions(text: str) -> list[Suppression]:
    found = []
    for number, column, comment in _comments(text):
        for pattern, form in ((_FILE_IGNORE, "file-ignore"), (_IGNORE, "ignore"), (_NOQA, "noqa")):
            for match in pattern.finditer(comment):
                codes = _codes(match.group("codes"))
                if form == "noqa" and codes:
                    codes = tuple(c for c in codes if c.startswith(OWN_PREFIX))
                    if not codes:
                        continue  # another tool's noqa
                found.append(Suppression(number, column + match.start() + 1, codes, form))
    return found


class SuppressionIndex:
    """Suppressions of the files findings point into, read once per file."""

    def __init__(self) -> None:
        self._files: dict[str, list[Suppression]] = {}

    def of(self, path: str) -> list[Suppression]:
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", errors="replace")
                self._files[path] = parse_suppressions(text)
            except OSError:
                self._files[path] = []
        return self._files[path]

    def match(self, path: str, line: int, rule_id: str) -> Suppression | None:
        for suppression in self.of(path):
            if suppression.form == "file-ignore" or suppression.line == line:
                if suppression.covers(rule_id):
                    suppression.used.add(rule_id)
                    return suppression
        return None

    def unused(self, paths: Iterable[str]) -> list[tuple[str, Suppression, tuple[str, ...]]]:
        """(path, suppression, codes that matched nothing) for explicit etrace-lint codes."""
        report = []
        for path in sorted(set(paths)):
            for suppression in self.of(path):
                if not suppression.codes:
                    continue
                idle = tuple(code for code in suppression.codes
                             if code.startswith(OWN_PREFIX) and not any(u.startswith(code) for u in suppression.used))
                if idle:
                    report.append((path, suppression, idle))
        return report


def _string_spans(text: str) -> list[tuple[int, int]]:
    """(first, last) line of every string token that spans lines: no comment fits inside one."""
    spans, fstrings = [], []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == getattr(tokenize, "FSTRING_START", None):  # Python 3.12 splits f-strings
                fstrings.append(token.start[0])
            elif token.type == getattr(tokenize, "FSTRING_END", None) and fstrings:
                spans.append((fstrings.pop(), token.end[0]))
            elif token.type == tokenize.STRING and token.start[0] != token.end[0]:
                spans.append((token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return spans


def _with_code(codes_text: str, rule_id: str) -> str:
    codes = list(_codes(codes_text))
    return ", ".join(codes if rule_id in codes else [*codes, rule_id])


def line_with_ignore(text: str, line: int, rule_id: str) -> str | None:
    """Line ``line`` of ``text`` with ``rule_id`` added to its ``# etrace-lint: ignore[...]``
    comment, or with such a comment appended; None when no comment can end that line
    (inside a string that goes on, or after a backslash continuation)."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    current = lines[line - 1]
    if current.rstrip().endswith("\\") or any(first <= line < last for first, last in _string_spans(text)):
        return None
    for number, column, comment in _comments(text):
        if number != line:
            continue
        match = _IGNORE.search(comment)
        if match:
            start, end = column + match.start("codes"), column + match.end("codes")
            return current[:start] + _with_code(match.group("codes"), rule_id) + current[end:]
    return f"{current.rstrip()}  # etrace-lint: ignore[{rule_id}]"


def file_ignore_edit(text: str, rule_id: str) -> tuple[int, bool, str]:
    """Where ``# etrace-lint: file-ignore[rule_id]`` goes: (line, replaces that line?, new text).

    An existing file-ignore comment gets the code added; otherwise a new line
    is inserted after a shebang and an encoding cookie, which must stay first.
    """
    for number, column, comment in _comments(text):
        match = _FILE_IGNORE.search(comment)
        if match:
            current = text.splitlines()[number - 1]
            start, end = column + match.start("codes"), column + match.end("codes")
            return number, True, current[:start] + _with_code(match.group("codes"), rule_id) + current[end:]
    lines = text.splitlines()
    at = 1
    while at <= min(2, len(lines)) and (lines[at - 1].startswith("#!")
                                        or re.match(r"^[ \t\f]*#.*?coding[:=]", lines[at - 1])):
        at += 1
    return at, False, f"# etrace-lint: file-ignore[{rule_id}]"
