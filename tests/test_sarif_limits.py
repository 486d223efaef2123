"""The SARIF log of a large tree stays within every limit GitHub code scanning documents,
and carries code flows and fixes in a form the SARIF 2.1.0 schema accepts."""

from __future__ import annotations

import json
import os

import pytest
from helpers import sarif_validator

from etrace_lint.core.findings import Edit, Finding, Fix, Level, Location, Subject
from etrace_lint.core.registry import active_rules
from etrace_lint.policy.decide import Outcome
from etrace_lint.writers import RunInfo
from etrace_lint.writers.sarif import GITHUB_LIMITS, SarifLimits, build_log

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEVELS = (Level.NOTE, Level.WARNING, Level.ERROR)


def _validate(log: dict) -> None:
    sarif_validator().validate(log)


def _info() -> RunInfo:
    return RunInfo(root=REPO, targets=3000, start_time="2026-01-01T00:00:00.000000Z",
                   end_time="2026-01-01T00:00:01.000000Z")


def _finding(index: int, related: int = 3, steps: int = 4) -> Finding:
    """A finding as a big tree gives them: many files, long messages, a route and a fix."""
    path = os.path.join(REPO, "models", f"net_{index // 10}.py")
    flow = tuple(Location(path, 10 + s, 5, f"step {s} of the route") for s in range(steps))
    fix = Fix("use braintrace.matmul(x, w)", (Edit(path, 20, 9, 20, 14, "braintrace.matmul(x, w)"),
                                               Edit(path, 3, 1, 3, 1, "import braintrace\n")))
    return Finding("ETL201", LEVELS[index % 3], f"finding {index}: " + "w reaches h through a plain op. " * 3,
                   f"target_{index}", Location(path, 20, 9),
                   tuple(Location(path, 30 + r, 1, f"related {r}") for r in range(related)),
                   subject=Subject(weight="w"), flow=flow, fix=fix)


@pytest.fixture(scope="module")
def large_log() -> dict:
    findings = [_finding(i) for i in range(3000)]
    findings.append(_finding(3000, related=400, steps=2500))
    long_message = _finding(3001)
    findings.append(Finding(long_message.rule_id, Level.ERROR, "x" * 5000, "", long_message.location))
    return build_log(Outcome(findings=findings), _info())


def test_large_log_is_valid_sarif(large_log):
    _validate(large_log)


def test_rule_descriptions_fit_githubs_limit():
    log = build_log(Outcome(), _info())
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} == set(active_rules())
    for rule in rules:
        assert len(rule["shortDescription"]["text"]) <= 1024, rule["id"]
        assert len(rule["fullDescription"]["text"]) <= 1024, rule["id"]
        assert len(rule["properties"]["tags"]) <= 10
    long_ones = [r for r in active_rules().values() if len(r.full_description) > 1024]
    # a rule whose description had to be cut still says its first sentences, and says it was cut
    for rule in long_ones:
        text = next(d for d in rules if d["id"] == rule.id)["fullDescription"]["text"]
        assert text.endswith("\u2026") and rule.full_description.startswith(text[:-1].rstrip())
        # the whole text stays in the rule's help
        described = next(d for d in rules if d["id"] == rule.id)
        assert rule.full_description.splitlines()[-1] in described["help"]["markdown"]


def test_every_result_within_githubs_limits(large_log):
    run = large_log["runs"][0]
    assert len(run["results"]) == 3002 <= GITHUB_LIMITS.results_per_run
    for result in run["results"]:
        assert len(result["message"]["text"]) <= 1024
        assert len(result["locations"]) + len(result.get("relatedLocations", ())) <= 100
        for flow in result.get("codeFlows", ()):
            assert sum(len(t["locations"]) for t in flow["threadFlows"]) <= 1000
        assert len(result.get("codeFlows", ())) <= 1
    cut = [r for r in run["results"] if r["message"]["text"].startswith("xxx")]
    assert len(cut) == 1 and cut[0]["message"]["text"].endswith("\u2026")


def test_a_long_route_keeps_both_ends(large_log):
    result = next(r for r in large_log["runs"][0]["results"] if r["message"]["text"].startswith("finding 3000:"))
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert len(steps) == 1000
    assert steps[0]["location"]["message"]["text"] == "step 0 of the route"
    assert steps[-1]["location"]["message"]["text"] == "step 2499 of the route"
    assert [s["executionOrder"] for s in steps] == list(range(1, 1001))


def test_over_the_results_limit_the_most_severe_are_kept_and_the_log_says_so():
    findings = [_finding(i) for i in range(300)]
    log = build_log(Outcome(findings=findings), _info(), SarifLimits(results_per_run=150))
    _validate(log)
    run = log["runs"][0]
    levels = [r["level"] for r in run["results"]]
    assert len(levels) == 150 and levels.count("error") == 100 and levels.count("warning") == 50
    assert run["properties"]["resultsLeftOut"] == 150
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("150 less severe results left out" in n["message"]["text"] for n in notes)
    # only the limit decides: the same findings within it are all there
    assert "resultsLeftOut" not in build_log(Outcome(findings=findings), _info())["runs"][0].get("properties", {})


def test_code_flow_and_fix_as_github_reads_them():
    result = build_log(Outcome(findings=[_finding(7)]), _info())["runs"][0]["results"][0]
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [10, 11, 12, 13]
    assert steps[0]["location"]["physicalLocation"]["artifactLocation"] == {"uri": "models/net_0.py",
                                                                            "uriBaseId": "%SRCROOT%"}
    (fix,) = result["fixes"]
    assert fix["description"]["text"] == "use braintrace.matmul(x, w)"
    assert fix["properties"]["applicability"] == "safe"
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "models/net_0.py"
    replacement, insertion = change["replacements"]
    assert replacement["deletedRegion"] == {"startLine": 20, "startColumn": 9, "endLine": 20, "endColumn": 14}
    assert replacement["insertedContent"]["text"] == "braintrace.matmul(x, w)"
    assert insertion["deletedRegion"]["startLine"] == insertion["deletedRegion"]["endLine"] == 3
    assert insertion["insertedContent"]["text"] == "import braintrace\n"


def test_flow_and_fix_survive_the_cache_round_trip():
    finding = _finding(3)
    again = Finding.from_json(json.loads(json.dumps(finding.to_json())))
    assert again.flow == finding.flow and again.fix == finding.fix
    plain = Finding("ETL001", Level.NOTE, "m", "t", Location("/x.py", 1))
    assert Finding.from_json(plain.to_json()).flow == () and Finding.from_json(plain.to_json()).fix is None


def test_each_rule_links_to_its_page_at_the_configured_docs_url(tmp_path):
    """helpUri is the rule's page on the documentation site: the published one by default, another copy of
    the site when docs-url names one (a key of [tool.etrace-lint], read like every other)."""
    from etrace_lint.config.pyproject import load_settings

    default = build_log(Outcome(), _info())["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"]: rule["helpUri"] for rule in default}["ETL208"] == (
        "https://etrace-lint.github.io/etrace-lint/rules/etl208/")
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\ndocs-url = "https://docs.example.org/lint"\n')
    settings = load_settings(str(tmp_path))
    info = RunInfo(root=REPO, docs_url=settings.docs_url)
    log = build_log(Outcome(), info)
    assert all(rule["helpUri"] == f"https://docs.example.org/lint/rules/{rule['id'].lower()}/"
               for rule in log["runs"][0]["tool"]["driver"]["rules"])
    sarif_validator().validate(log)
