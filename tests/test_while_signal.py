"""ETL212: a learning signal that reaches the output only through a while loop braintrace detaches.

The fixture's markers (tests/fixtures/own/while_signal.py) are checked with the other own rules'
(test_own_rules.py); here, what differs between braintrace's lines, and the rule's documented
example, linted with the probe that backs the finding with a measurement.
"""

from __future__ import annotations

import json
import os
import re

from helpers import FIXTURES, lint_shared
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.core import registry
from etrace_lint.writers.properties import finding_properties

FIXTURE = os.path.join(FIXTURES, "own", "while_signal.py")


def _verdicts(findings, weight: str) -> set[str]:
    return {f.rule_id for f in findings if finding_properties(f).get("weight") == weight}


def test_a_loop_that_reaches_the_hidden_state_through_further_ops_cuts_the_signal_where_braintrace_detaches_it():
    findings, _ = lint_shared(FIXTURE + "::etrace_target_squashed")
    if braintrace_adapter.detaches_loops_before_hidden():  # 0.2.8: w1's online gradient measured exactly zero
        assert _verdicts(findings, "w1") == {"ETL212"}
    else:  # 0.2.6 leaves the loop to reverse mode: the online step cannot be differentiated, nothing is cut
        assert "ETL212" not in _verdicts(findings, "w1")
    assert _verdicts(findings, "w2") == {"ETL001"}


def _example() -> str:
    example = registry.all_rules()["ETL212"].section("Example")
    match = re.search(r"```python\n(.*?)```", example, re.S)
    assert match, "ETL212's example has no Python block"
    return match.group(1)


def test_the_documented_example_reports_w1_and_the_probe_measures_its_zero_gradient(tmp_path):
    # a run's report, in this process (tests/in_process.py): no fork server importing JAX again
    code = _example()
    (tmp_path / "settling.py").write_text(code, encoding="utf-8")
    proc = run_cli("settling.py", "--probe", "--no-cache", "--show-info", "--output-format", "json",
                   cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr[-3000:]
    findings = json.loads(proc.stdout)["findings"]
    about = {}
    for finding in findings:
        about.setdefault(finding.get("properties", {}).get("weight"), []).append(finding)
    assert [f["rule"] for f in about["w1"]] == ["ETL212"], about["w1"]  # no "learns online" beside it
    assert [f["rule"] for f in about["w2"]] == ["ETL001"], about["w2"]  # the loop's own weight learns
    (finding,) = about["w1"]
    marked = next(n for n, line in enumerate(code.splitlines(), start=1) if line.endswith("# ETL212"))
    assert finding["location"]["line"] == marked
    assert "h1" in finding["message"] and "`while` loop" in finding["message"]
    loop = next(n for n, line in enumerate(code.splitlines(), start=1) if "jax.lax.while_loop" in line)
    assert any(r["line"] == loop for r in finding["related"]), finding["related"]
    # reverse mode cannot take BPTT through the loop: the probe takes it in forward mode and measures
    # w1's online gradient at exactly zero against it
    (measured,) = finding["properties"]["measured"]
    (leaf,) = measured["probe"]["leaves"]
    assert measured["rule"] == "ETL411" and leaf["onlineNorm"] == 0.0 and leaf["bpttNorm"] > 1e-6, measured


def test_the_report_graph_draws_the_loop_as_what_blocks_the_weight():
    from etrace_lint.core.learning_graph import learning_graph
    from etrace_lint.core.weight_verdict import WeightVerdict

    findings, _ = lint_shared(FIXTURE + "::etrace_target_settling")
    graph = learning_graph(findings[0].target, findings)
    nodes = {node.id: node for node in graph.nodes}
    (w1,) = [node for node in graph.nodes if node.kind == "weight" and node.label == "w1"]
    assert w1.verdict is WeightVerdict.ZERO
    blocked = [nodes[edge.target].label for edge in graph.edges if edge.source == w1.id and edge.kind == "blocked"]
    loop = next(n for n, line in enumerate(open(FIXTURE, encoding="utf-8"), start=1)
                if "self.h2.value = jax.lax.while_loop" in line)
    assert blocked == [f"while loop cuts the learning signal (line {loop})"], blocked
