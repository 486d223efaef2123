"""Baselines: record today's findings, then report only new ones.

A finding is matched by a fingerprint of its rule, model, file, message and
the stripped text of its line, plus an occurrence index, not by its line
number, so unrelated edits that move lines keep it matched.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter

from .findings import Finding

FORMAT = 1


def _line_text(path: str, line: int, cache: dict) -> str:
    if path not in cache:
        try:
            with open(path, "rb") as handle:
                cache[path] = handle.read().decode("utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def fingerprints(findings: list[Finding], root: str) -> list[str]:
    texts: dict = {}
    seen: Counter = Counter()
    prints = []
    for finding in findings:
        rel = os.path.relpath(finding.path, root).replace(os.sep, "/")
        raw = "\0".join([finding.rule_id, finding.target, rel, finding.message,
                         _line_text(finding.path, finding.line, texts)])
        digest = hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        seen[digest] += 1
        prints.append(f"{digest}:{seen[digest]}")
    return prints


def write_baseline(path: str, findings: list[Finding], root: str) -> None:
    document = {"format": FORMAT, "tool": "etrace-lint", "fingerprints": sorted(fingerprints(findings, root))}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


def read_baseline(path: str) -> set[str]:
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or not isinstance(document.get("fingerprints"), list):
        raise ValueError(f"{path} is not an etrace-lint baseline")
    return set(document["fingerprints"])


def new_findings(findings: list[Finding], known: set[str], root: str) -> list[Finding]:
    return [f for f, fp in zip(findings, fingerprints(findings, root)) if fp not in known]
