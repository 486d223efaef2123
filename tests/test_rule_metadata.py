"""What each rule declares of itself agrees with itself, and drives what is said about a weight.

A rule's metadata (core/rule.py) is the one list of what its findings mean: what they say of a weight's
learning (``says``), which findings they replace, what the learning graph draws. The learning graph, the
report, the referee's tests and the supersession read it; no module keeps its own list of rule ids. The
SARIF log carries each rule's texts, which the golden snapshots leave out (tests/golden.py): they are
checked here, for every rule.
"""

from __future__ import annotations

import ast
import os
import re

import pytest
from helpers import REPO

from etrace_lint.config.settings import Settings
from etrace_lint.core.findings import Finding, Level, Location, Subject
from etrace_lint.core.learning_graph import learning_graph
from etrace_lint.core.registry import active_rules, all_rules
from etrace_lint.core.rule import MeasuredRule, rule_page_url
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.policy.decide import apply_policy
from etrace_lint.writers import RunInfo
from etrace_lint.writers.sarif import build_log

RULES = all_rules()
SAYING = [rule for rule in RULES.values() if rule.says is not None]


def _saying(verdict: WeightVerdict) -> set[str]:
    return {rule.id for rule in RULES.values() if rule.says is verdict}


@pytest.mark.parametrize("rule", SAYING, ids=lambda rule: rule.id)
def test_a_claim_counts_at_the_level_the_rule_reports_it(rule):
    # a claim that the weight learns is a note; a static denial counts at warning and error only, so a rule of
    # the graph that denied at note level would never change a weight's verdict; a measured claim counts at any
    # level (a whole multiple of BPTT's in its direction is a note, and still what the weight's gradient is)
    if rule.says.learns:
        assert rule.level is Level.NOTE, rule.id
    elif not rule.measured:
        assert rule.level.rank >= Level.WARNING.rank, rule.id


def test_what_a_rule_draws_or_claims_of_a_zero_gradient_is_a_denial():
    for rule in RULES.values():
        if rule.blocker is not None or rule.output_only:
            assert rule.says is not None and rule.says.blocks, rule.id
        if rule.claims_zero_gradient:
            assert rule.says is WeightVerdict.ZERO and not rule.measured, rule.id


def test_a_rule_supersedes_only_claims_that_the_weight_learns_and_says_otherwise():
    for rule in RULES.values():
        for beaten in rule.supersedes:
            assert RULES[beaten].says is not None and RULES[beaten].says.learns, (rule.id, beaten)
            assert rule.says is not None and not rule.says.learns, rule.id


def test_measured_rules_are_the_probes_and_verifys():
    measured = {rule.id for rule in RULES.values() if rule.measured}
    assert measured == {rule.id for rule in RULES.values()
                        if isinstance(rule, MeasuredRule) and rule.opt_in_flag in ("--probe", "--verify")}
    assert "ETL411" in measured and "ETL304" not in measured and "ETL208" not in measured


def test_the_verdicts_the_rules_say_cover_what_the_referee_compares():
    # the referee (tests/test_real_models.py) compares these lists with braintrace's measured gradient
    assert {"ETL001", "ETL003"} <= _saying(WeightVerdict.LEARNS)
    assert {"ETL005", "ETL201", "ETL208", "ETL411"} <= _saying(WeightVerdict.ZERO)
    assert "ETL213" in _saying(WeightVerdict.WITHIN_WINDOW)
    assert "ETL006" not in _saying(WeightVerdict.ZERO)  # a partial path: the weight still learns through the rest


def _finding(rule_id: str, level: Level | None = None, weight: str = "w") -> Finding:
    return Finding(rule_id, level or RULES[rule_id].level, f"{rule_id} about {weight}", "net",
                   Location("/model.py", 3), subject=Subject(weight=weight, weight_path=(weight,)))


def _verdict(*findings: Finding) -> WeightVerdict:
    return learning_graph("net", list(findings)).weights()["w"]


def test_a_weights_verdict_is_what_its_rules_say():
    assert _verdict(_finding("ETL001")) is WeightVerdict.LEARNS
    assert _verdict(_finding("ETL003")) is WeightVerdict.LEARNS  # a readout exact from same-step gradients
    assert _verdict(_finding("ETL213")) is WeightVerdict.WITHIN_WINDOW
    assert _verdict(_finding("ETL208")) is WeightVerdict.ZERO
    # connected through one use, left out through another: it learns partly, unless a measurement says nothing
    assert _verdict(_finding("ETL001"), _finding("ETL201")) is WeightVerdict.PARTLY
    assert _verdict(_finding("ETL001"), _finding("ETL201"), _finding("ETL411")) is WeightVerdict.ZERO
    assert _verdict(_finding("ETL001"), _finding("ETL412")) is WeightVerdict.MULTIPLE
    assert _verdict(_finding("ETL001"), _finding("ETL415")) is WeightVerdict.AGAINST
    assert _verdict(_finding("ETL410"), _finding("ETL001")) is WeightVerdict.STEP_RAISES
    assert _verdict(_finding("ETL413")) is WeightVerdict.NOT_FINITE
    # a denial a user's configuration shows as a note denies nothing; a finding saying nothing is no verdict
    assert _verdict(_finding("ETL001"), _finding("ETL201", Level.NOTE)) is WeightVerdict.LEARNS
    assert _verdict(_finding("ETL007")) is WeightVerdict.NOT_MEASURED


def test_the_graph_draws_the_blocker_a_rule_declares():
    blocked = Finding("ETL207", Level.WARNING, "mean subtracted", "net", Location("/model.py", 3),
                      (Location("/model.py", 5, 1, "the mean is subtracted here"),),
                      subject=Subject(weight="w", weight_path=("w",), primitive="etp_mv"))
    graph = learning_graph("net", [blocked])
    labels = {node.id: node.label for node in graph.nodes}
    (edge,) = [edge for edge in graph.edges if edge.kind == "blocked"]
    assert labels[edge.source] == "w" and labels[edge.target] == "mean subtracted (line 5)"


def test_the_sarif_log_carries_every_rules_texts():
    outcome = apply_policy([], [], Settings(root=REPO).for_policy(), [])
    log = build_log(outcome, RunInfo(root=REPO, targets=0, start_time="", end_time=""))
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    rules = active_rules()
    assert list(descriptors) == list(rules)
    for rule in rules.values():
        described = descriptors[rule.id]
        assert described["name"] == rule.name and described["shortDescription"]["text"] == rule.summary, rule.id
        full = described["fullDescription"]["text"]  # clipped to GitHub's limit (tests/test_sarif_limits.py)
        assert full and rule.full_description.startswith(full.rstrip("…")), rule.id
        assert described["help"]["markdown"] == rule.docs != "", rule.id
        assert described["helpUri"] == rule_page_url(rule.id)
        assert described["defaultConfiguration"]["level"] == rule.level.value


_RULE_ID = re.compile(r"^ETL\d{3}$")


def _is_rule_id(node: ast.expr, names: set[str]) -> bool:
    return ((isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_RULE_ID.match(node.value)))
            or (isinstance(node, ast.Name) and node.id in names))


def _rule_id_names(tree: ast.Module) -> set[str]:
    """The module's names bound to a rule id (``STEP_RAISES = "ETL410"``, ``A, B = "ETL410", "ETL411"``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                names.update(t.id for t, v in pairs if isinstance(t, ast.Name) and _is_rule_id(v, set()))
    return names


def test_no_module_of_the_package_keeps_a_list_of_rule_ids():
    # what a rule's findings mean is its metadata; a tuple or set of ids elsewhere is a list someone must know of
    package = os.path.join(REPO, "etrace_lint")
    lists = []
    for folder, _, files in os.walk(package):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), path)
            names = _rule_id_names(tree)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Tuple, ast.Set, ast.List)) and len(node.elts) >= 2:
                    if sum(_is_rule_id(e, names) for e in node.elts) >= 2 and not isinstance(
                            getattr(node, "ctx", None), ast.Store):
                        lists.append(f"{os.path.relpath(path, REPO)}:{node.lineno}")
    # a tuple that unpacks into names, each one id (``A, B = "ETL410", "ETL411"``), names rules; it lists none
    unpacked = {f"{os.path.relpath(p, REPO)}:{n}" for p, n in _unpacking_sites(package)}
    assert sorted(set(lists) - unpacked) == []


def _unpacking_sites(package: str) -> list[tuple[str, int]]:
    sites = []
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read(), path)
                sites.extend((path, node.value.lineno) for node in ast.walk(tree)
                             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)
                             and isinstance(node.value, ast.Tuple))
    return sites
