"""Baselines: record today's findings, then report only new ones.

A finding is matched by a fingerprint of its rule, model, file, message and
the stripped text of its line, plus an occurrence index among findings with
the same fingerprint, never by its line number: unrelated edits that move
lines keep it matched, while a second copy of the same problem is new.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Set

from ..core.findings import Finding

FORMAT = 1
# Messages may name other places by line ("created at model.py:12"); those
# numbers move with unrelated edits too.
_LINE_REFERENCE = re.compile(r"(?<=\.py):\d+(?::\d+)?|\blines? \d+(?:-\d+)?")


class BaselineError(Exception):
    """A baseline file that cannot be used: a usage error."""


def _line_text(path: str, line: int, cache: dict[str, list[str]]) -> str:
    if path not in cache:
        try:
            with open(path, "rb") as handle:
                cache[path] = handle.read().decode("utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def fingerprints(findings: list[Finding], root: str) -> list[str]:
    """One fingerprint per finding, in the order given (sorted findings give stable indices)."""
    texts: dict[str, list[str]] = {}
    seen: Counter[str] = Counter()
    prints = []
    for finding in findings:
        rel = os.path.relpath(finding.path, root).replace(os.sep, "/")
        raw = "\0".join([finding.rule_id, finding.target, rel, _LINE_REFERENCE.sub("", finding.message),
                         _line_text(finding.path, finding.line, texts)])
        digest = hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        seen[digest] += 1
        prints.append(f"{digest}:{seen[digest]}")
    return prints


def write_baseline(path: str, findings: list[Finding], root: str) -> frozenset[str]:
    """Record ``findings``; returns the fingerprints recorded, as :func:`read_baseline` would read them."""
    prints = sorted(fingerprints(sorted(findings, key=Finding.sort_key), root))
    document = {"format": FORMAT, "tool": "etrace-lint", "findings": len(prints), "fingerprints": prints}
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".baseline-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
    os.replace(temp, path)
    return frozenset(prints)


def read_baseline(path: str) -> set[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise BaselineError(f"baseline {path} cannot be read: {exc.strerror}") from None
    except ValueError:
        raise BaselineError(f"baseline {path} is not JSON; write it with --write-baseline") from None
    if (not isinstance(document, dict) or document.get("format") != FORMAT
            or not isinstance(document.get("fingerprints"), list)):
        raise BaselineError(f"baseline {path} is not an etrace-lint baseline (format {FORMAT})")
    return {str(p) for p in document["fingerprints"]}


def new_findings(findings: list[Finding], known: Set[str], root: str) -> list[Finding]:
    """The findings whose fingerprint is not in ``known``, in the order given."""
    return [f for f, fp in zip(findings, fingerprints(findings, root)) if fp not in known]
