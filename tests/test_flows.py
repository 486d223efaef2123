"""Code flows: a finding about a route shows the route, in the user's code, in data-flow order."""

from __future__ import annotations

from helpers import fixture, lint_shared

from etrace_lint.analysis.flows import merge_steps
from etrace_lint.core.findings import Location
from etrace_lint.writers.properties import finding_properties


def _line(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as handle:
        return next(n for n, line in enumerate(handle, start=1) if text in line)


def test_weight_to_weight_route_crosses_the_other_weights_op():
    path = fixture("compiler", "relations.py")
    findings, _ = lint_shared(path)
    (finding,) = [f for f in findings
                  if f.rule_id == "ETL005" and "Wr" in f.message and not finding_properties(f).get("iterations")]
    steps = [(step.line, step.label) for step in finding.flow]
    labels = [label for _, label in steps]
    assert labels[0] == "Wr.weight is created here" and labels[1] == "Wr.weight is used here"
    assert "its value crosses Wh.weight's op" in labels and labels[-1] == "h gets its new value here"
    lines = [line for line, _ in steps]
    assert lines[1] < lines[2] < lines[3]  # use, crossing, write: in the order the step runs them
    assert all(step.path == path for step in finding.flow)


def test_plain_op_route_ends_at_the_hidden_state_write():
    path = fixture("fixes", "leaky_matmul.py")
    findings, _ = lint_shared(path + "::etrace_target_leaky_matmul")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert [step.line for step in finding.flow] == [_line(path, "self.w_in = "), _line(path, "x @ self.w_in")]
    # the use and the write share a line: one step says both
    assert finding.flow[-1].label == "w_in is used here; h gets its new value here"


def test_consecutive_steps_on_one_line_merge_and_unknown_steps_go():
    a, b = Location("/m.py", 3, 1, "created"), Location("/m.py", 7, 5, "used")
    merged = merge_steps([a, None, b, Location("/m.py", 7, 9, "crosses a `scan`"), Location("/m.py", 3, 1, "again")])
    assert [(s.line, s.label) for s in merged] == [(3, "created"), (7, "used; crosses a `scan`"), (3, "again")]
