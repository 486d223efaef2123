"""ETL301's fix: drop the codes of an unused suppression, or the whole comment when none is left."""

from __future__ import annotations

import io
import re
import tokenize

from ..config.suppressions import _FILE_IGNORE, _IGNORE, _NOQA
from ..core.findings import Edit, Finding, Fix
from ..core.rule import SourceTexts

_FORMS = {"noqa": _NOQA, "ignore": _IGNORE, "file-ignore": _FILE_IGNORE}


def _comment_on(text: str, line: int) -> tuple[int, str] | None:
    """(0-based column, text) of the comment that ends line ``line``."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] == line:
                return token.start[1], token.string
            if token.start[0] > line:
                break
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return None


def _without_codes(comment: str, match: re.Match[str], unused: set[str]) -> str:
    """The comment with ``unused`` taken out of the directive ``match``; the directive goes
    when no code is left, and what else the comment says stays."""
    kept = [c for c in re.split(r"[,\s]+", (match.group("codes") or "").strip()) if c and c.upper() not in unused]
    if kept:
        return comment[:match.start("codes")] + ", ".join(kept) + comment[match.end("codes"):]
    rest = (comment[:match.start()] + comment[match.end():]).strip()
    if not rest or rest == "#":
        return ""
    return rest if rest.startswith("#") else f"# {rest}"


def remove_suppression_fix(finding: Finding, sources: SourceTexts) -> Fix | None:
    source_text = sources.text(finding.location.path)
    form = finding.subject.suppression_form
    unused = {c.upper() for c in finding.subject.suppression_codes}
    if source_text is None or form not in _FORMS or not unused:
        return None
    line = finding.location.line
    found = _comment_on(source_text, line)
    if found is None:
        return None
    column, comment = found
    match = next((m for m in _FORMS[form].finditer(comment)
                  if column + m.start() + 1 == finding.location.column), None)
    if match is None:
        return None
    lines = source_text.splitlines(keepends=True)
    current = lines[line - 1]
    new_comment = _without_codes(comment, match, unused)
    code = current[:column].rstrip()
    end = column + len(comment)
    path = finding.location.path
    codes = ", ".join(sorted(unused))
    if new_comment:
        edit = Edit(path, line, column + 1, line, end + 1, new_comment)
        return Fix(f"remove {codes} from the suppression comment", (edit,), "safe")
    if not code:  # a line that holds only the comment goes with it
        return Fix("remove the unused suppression comment", (Edit(path, line, 1, line + 1, 1, ""),), "safe")
    return Fix("remove the unused suppression comment", (Edit(path, line, len(code) + 1, line, end + 1, ""),), "safe")
