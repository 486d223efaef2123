"""What acts on findings reads their typed fields: SARIF/JSON properties are only written."""

from __future__ import annotations

import os
import re

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "etrace_lint")
# a finding's properties read (``finding.properties``), or a document's (``["properties"]``, not written)
READS = re.compile(r"\.properties\b|\[\"properties\"\](?!\s*=)|\.get\(\"properties\"")


def _modules(*parts: str) -> list[str]:
    found = []
    for part in parts:
        path = os.path.join(ROOT, part)
        if path.endswith(".py"):
            found.append(path)
            continue
        found += [os.path.join(folder, name) for folder, _, names in os.walk(path)
                  for name in names if name.endswith(".py")]
    return sorted(found)


def test_fixes_verify_and_merge_never_read_properties_back():
    readers = _modules("fixes", "verify", os.path.join("writers", "merge.py"))
    assert len(readers) > 10
    found = [f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}" for path in readers
             for number, line in enumerate(open(path, encoding="utf-8"), start=1) if READS.search(line)]
    assert found == [], "read the finding's Subject (or, for shard logs, writers/own_logs.py) instead"


def test_only_own_logs_reads_an_output_document():
    # the pattern does find a document read where there is one
    assert READS.search('model = result.get("properties", {}).get("model", "")')
    own_logs = open(os.path.join(ROOT, "writers", "own_logs.py"), encoding="utf-8").read()
    assert READS.search(own_logs)
