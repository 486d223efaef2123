"""The bundled examples and the fixture corpus give byte for byte the JSON and SARIF recorded.

The snapshots live in ``tests/data/golden/braintrace-<version>/``, one folder per braintrace
line; a version without snapshots is skipped. They record behaviour, not the rules' texts (see
``tests/golden.py``). After a change that is meant to alter the output, regenerate both lines'
from the repository's root::

    python -m tests.golden --update --all-lines
"""

from __future__ import annotations

import difflib
import json

import pytest
from golden import CORPORA, braintrace_version, produce, snapshot_changes, snapshot_folder, stored


@pytest.mark.parametrize("corpus", CORPORA, ids=[corpus.name for corpus in CORPORA])
def test_output_is_byte_identical_to_the_snapshot(corpus):
    version = braintrace_version()
    if stored(f"{corpus.name}.json") is None:
        pytest.skip(f"no snapshots for braintrace {version} in {snapshot_folder()}")
    for name, text in produce(corpus).items():
        expected = stored(name)
        assert expected is not None, f"{name} has no snapshot for braintrace {version}"
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"snapshot/{name}", f"now/{name}", n=2))
            pytest.fail(f"{name} differs from its snapshot (braintrace {version}):\n{diff[:6000]}")


def test_the_summary_names_the_counts_findings_and_rule_entries_that_changed():
    """``--summary`` reads a regenerated snapshot against the committed one as a reviewer would: the run's
    counts that moved, each finding gained or lost, and the rule entries the SARIF log gained or lost."""
    old_json = stored("fixtures.json") or pytest.skip(f"no snapshots in {snapshot_folder()}")
    document = json.loads(old_json)
    gone = document["findings"].pop()
    document["summary"]["findings"] -= 1
    said = snapshot_changes("fixtures.json", old_json, json.dumps(document))
    where = f"{gone['location']['path']}:{gone['location']['line']} {gone['rule']} {gone['level']}"
    assert said == [f"fixtures.json: counts: findings {len(document['findings']) + 1} -> {len(document['findings'])}",
                    f"fixtures.json: - {where} {gone['message'][:100]}"]

    old_sarif = stored("fixtures.sarif") or ""
    log = json.loads(old_sarif)
    entries = log["runs"][0]["tool"]["driver"]["rules"]
    dropped = entries.pop(0)["id"]
    entries.append({"id": "ETL999", "name": "new-rule"})
    assert snapshot_changes("fixtures.sarif", old_sarif, json.dumps(log)) == [
        f"fixtures.sarif: - rule entry {dropped}", "fixtures.sarif: + rule entry ETL999"]
    assert snapshot_changes("fixtures.json", old_json, old_json) == []
    moved = json.loads(old_json)
    moved["findings"][0]["location"]["column"] += 1
    assert snapshot_changes("fixtures.json", old_json, json.dumps(moved)) == [
        "fixtures.json: 1 finding(s) kept their line, rule and message but changed in a column, a related location "
        "or a property (git diff shows them)"]
