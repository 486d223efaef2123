"""The SARIF log: valid against the official 2.1.0 schema, ready for GitHub code scanning."""

from __future__ import annotations

import json
import os
import random
from dataclasses import replace

import pytest
from helpers import REPO, fixture, lint_shared, sarif_validator

from etrace_lint import __version__
from etrace_lint.config.settings import Settings
from etrace_lint.core.findings import Finding, Level, Location
from etrace_lint.core.registry import active_rules
from etrace_lint.policy.decide import Outcome, apply_policy
from etrace_lint.writers import RunInfo
from etrace_lint.writers.fingerprints import line_hashes
from etrace_lint.writers.sarif import build_log

LINTED = (fixture("compiler", "relations.py"), fixture("bad", "import_error.py"))


def _lint():
    findings, errors = [], []
    for path in LINTED:
        found, failed = lint_shared(path)
        findings += found
        errors += failed
    return findings, errors


def _outcome(findings, errors, root=REPO) -> Outcome:
    return apply_policy(findings, errors, Settings(root=root, show_info=True).for_policy(), list(LINTED))


def _info(root=REPO, **extra) -> RunInfo:
    return RunInfo(root=root, targets=2, start_time="2026-01-01T00:00:00.000000Z",
                   end_time="2026-01-01T00:00:05.000000Z", **extra)


@pytest.fixture(scope="module")
def linted():
    return _lint()


@pytest.fixture(scope="module")
def log(linted):
    return build_log(_outcome(*linted), _info())


@pytest.fixture(scope="module")
def run(log):
    return log["runs"][0]


def _without_times(log: dict) -> dict:
    log = json.loads(json.dumps(log))
    for invocation in log["runs"][0]["invocations"]:
        invocation.pop("startTimeUtc", None)
        invocation.pop("endTimeUtc", None)
    return log


def test_valid_against_the_sarif_schema(log):
    sarif_validator().validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1


def test_driver_lists_every_active_rule_with_its_docs(run):
    driver = run["tool"]["driver"]
    assert driver["name"] == "etrace-lint"
    assert driver["semanticVersion"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = active_rules()
    assert [r["id"] for r in driver["rules"]] == list(rules)
    gru = next(r for r in driver["rules"] if r["id"] == "ETL005")
    rule = rules["ETL005"]
    assert gru["name"] == rule.name
    assert gru["shortDescription"]["text"] == rule.summary
    assert gru["fullDescription"]["text"] == rule.section("What it does") != ""
    assert gru["help"]["markdown"] == rule.docs
    assert "How to fix" in gru["help"]["text"] and "## " not in gru["help"]["text"]
    assert gru["defaultConfiguration"]["level"] == "warning"
    assert gru["properties"]["problem.severity"] == "warning"
    assert gru["properties"]["precision"] and "learning" in gru["properties"]["tags"]
    note = next(r for r in driver["rules"] if r["id"] == "ETL001")
    assert note["defaultConfiguration"]["level"] == "note"
    assert note["properties"]["problem.severity"] == "recommendation"


def test_results_point_at_the_users_lines(run, linted):
    findings, _ = linted
    rules = run["tool"]["driver"]["rules"]
    excluded = [r for r in run["results"] if r["ruleId"] == "ETL005"]
    assert len(excluded) == 1
    result = excluded[0]
    assert rules[result["ruleIndex"]]["id"] == "ETL005"
    assert result["level"] == "warning"
    finding = next(f for f in findings if f.rule_id == "ETL005")
    assert finding.target in result["message"]["text"]
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "tests/fixtures/compiler/relations.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": finding.line, "startColumn": finding.location.column}
    with open(finding.path, encoding="utf-8") as handle:
        assert "self.Wr(" in handle.read().splitlines()[finding.line - 1]
    related = result["relatedLocations"]
    assert [r["message"]["text"] for r in related] == [loc.label or "related" for loc in finding.related]
    assert all(r["physicalLocation"]["region"]["startLine"] >= 1 for r in related)
    assert result["properties"]["model"] == finding.target
    assert result["properties"]["braintraceKind"] == "relation_excluded_weight_to_weight"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["primaryLocationLineHash"].count(":") == 1


def test_uris_are_relative_to_the_root_and_the_log_names_no_absolute_path(log, run, linted):
    assert "%SRCROOT%" in run["originalUriBaseIds"]
    assert REPO not in json.dumps(log) and "file://" not in json.dumps(log)
    locations = [r["locations"][0] for r in run["results"]]
    locations += [n["locations"][0] for n in run["invocations"][0]["toolExecutionNotifications"]]
    for location in locations:
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        uri = artifact["uri"]
        assert not uri.startswith("/") and "\\" not in uri and "://" not in uri
        assert os.path.isfile(os.path.join(REPO, uri))
    # --root elsewhere: paths are relative to it
    sub = os.path.join(REPO, "tests", "fixtures")
    log = build_log(_outcome(*linted, root=sub), _info(root=sub))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert "compiler/relations.py" in uris


def test_tool_errors_are_execution_notifications(run):
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "package_that_is_not_installed" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tests/fixtures/bad/import_error.py"
    assert invocation["startTimeUtc"] < invocation["endTimeUtc"]
    assert run["automationDetails"]["id"] == "etrace-lint/"


def test_clean_run_is_successful_and_has_no_notifications(linted):
    findings, _ = linted
    log = build_log(_outcome(findings, []), _info())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in invocation


def test_suppressed_findings_and_device(linted):
    findings, _ = linted
    finding = next(f for f in findings if f.rule_id == "ETL005")
    outcome = Outcome(findings=[replace(finding, suppressed="noqa")])
    run = build_log(outcome, _info(device="cpu"))["runs"][0]
    (result,) = run["results"]
    assert [s["kind"] for s in result["suppressions"]] == ["inSource"]
    assert run["properties"]["device"] == "cpu"
    plain = build_log(Outcome(findings=[finding]), _info())["runs"][0]
    assert "suppressions" not in plain["results"][0] and "properties" not in plain


def test_same_input_same_log_apart_from_times(log, linted):
    again = build_log(_outcome(*_lint()), _info())
    assert _without_times(again) == _without_times(log)
    # the order findings arrive in does not matter
    findings, errors = linted
    shuffled = list(findings)
    random.Random(3).shuffle(shuffled)
    outcome = Outcome(findings=shuffled, tool_errors=list(reversed(errors)))
    assert build_log(outcome, _info())["runs"][0]["results"] == build_log(
        Outcome(findings=sorted(findings, key=Finding.sort_key), tool_errors=errors), _info())["runs"][0]["results"]


# -- primaryLocationLineHash ---------------------------------------------------------------
# GitHub's upload action hashes, for each line, the 100 characters that start it
# (spaces and tabs skipped, CR/CRLF read as LF, the file followed by the code
# 65535 and then zeros) as a polynomial in 37 modulo 2**64, in hex, with ":n"
# counting earlier lines that hashed the same. Written out directly here, not
# as the rolling hash the writer uses.

def _by_hand(chars: list[int]) -> str:
    window = (chars + [0] * 100)[:100]
    return format(sum(c * 37 ** (99 - k) for k, c in enumerate(window)) % 2 ** 64, "x")


def test_line_hash_of_a_known_input():
    a, b, nl, eof = ord("a"), ord("b"), 10, 65535
    assert _by_hand([a, nl, b, nl, eof]) == "81b8d8db678b2bbe"
    hashes = line_hashes("a\nb\n")
    assert hashes[1] == "81b8d8db678b2bbe:1"
    assert hashes[2] == _by_hand([b, nl, eof]) + ":1"
    # indentation and line endings do not change a line's hash
    assert line_hashes("  a\t\r\n  b\r\n")[1] == hashes[1]
    assert line_hashes("a\rb\r")[2] == hashes[2]


def test_line_hash_counts_repeated_lines():
    text = ("x" * 100 + "\n") * 2 + "y\n"
    hashes = line_hashes(text)
    same = _by_hand([ord("x")] * 100)
    assert hashes[1] == same + ":1" and hashes[2] == same + ":2"
    assert hashes[3] == _by_hand([ord("y"), 10, 65535]) + ":1"


def test_fingerprint_follows_the_line_not_its_number(tmp_path):
    source = "import x\n\ndef f():\n    return W @ h\n"
    first, moved = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(source, encoding="utf-8")
    moved.write_text("# a comment added above\n" + source, encoding="utf-8")

    def fingerprint(path, line):
        finding = Finding("ETL201", Level.WARNING, "m", "t", Location(str(path), line, 5))
        result = build_log(Outcome(findings=[finding]), _info(root=str(tmp_path)))["runs"][0]["results"][0]
        return result["partialFingerprints"]["primaryLocationLineHash"]

    assert fingerprint(first, 4) == fingerprint(moved, 5)
    assert fingerprint(first, 4) != fingerprint(first, 3)
