"""Every compiler or tracing exception becomes one finding, with the right rule, on the user's line."""

from __future__ import annotations

import glob
import os
import re

import braintrace
import pytest
from helpers import FIXTURES, fixture
from test_compiler_rules import assert_matches_markers, linted

from etrace_lint.analysis.braintrace_adapter import Compilation
from etrace_lint.core import registry
from etrace_lint.core.findings import Level
from etrace_lint.core.wording import plain_text
from etrace_lint.engine.rules_compiler import classify_error
from etrace_lint.writers.properties import finding_properties

ERROR_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "compiler", "errors_*.py")))

# exception rule -> (fixture, target, rule that reports it). An exception that
# the compiler explains with an ERROR record first is reported once, under
# the record's rule, with the exception class as braintraceError.
RAISED_BY_A_MODEL = {
    "ETL100": ("errors_trace.py", "etrace_target_wrong_shape", "ETL100"),
    "ETL101": ("errors_units.py", "etrace_target_unit_swap", "ETL101"),
    "ETL102": ("errors_param_write.py", "etrace_target_hebbian", "ETL102"),
    "ETL112": ("../environ/leaky.py", "etrace_target_leaky", "ETL112"),
    "ETL103": ("control_flow.py", "etrace_target_hidden_in_while_refused", "ETL103"),
    "ETL104": ("errors_compile.py", "etrace_target_etp_op_in_while", "ETL104"),
    "ETL105": ("control_flow.py", "etrace_target_weight_in_while", "ETL016"),
    "ETL106": ("errors_compile.py", "etrace_target_two_hidden_states_in_one_equation", "ETL106"),
    "ETL107": ("errors_compile.py", "etrace_target_canonicalisation_limit", "ETL107"),
    "ETL108": ("errors_trace.py", "etrace_target_etp_misuse", "ETL108"),
    "ETL110": ("errors_compile.py", "etrace_target_outer_relation_into_descended_scan", "ETL110"),
    "ETL111": ("errors_trace.py", "etrace_target_unknown_option", "ETL111"),
    "ETL113": ("errors_hidden_constant.py", "etrace_target_hidden_set_to_constant", "ETL113"),
}
# ETL109: HiddenGroup.check_consistent_varshape is a second line of defence;
# the per-transition shape filter that builds the groups already keeps states
# of different shapes apart, so no model reaches it. ETL199 is whatever nobody
# has seen yet. Both are checked with constructed exceptions below.
NOT_RAISED_BY_A_MODEL = {"ETL109", "ETL199"}


def findings_of(name: str, target: str):
    findings, errors = linted(fixture("compiler", name))
    assert not errors, [e.message for e in errors]
    return [f for f in findings if f.target == target]


@pytest.mark.parametrize("path", ERROR_FIXTURES, ids=os.path.basename)
def test_error_fixture_reports_exactly_its_markers(path):
    assert_matches_markers(path)


def test_every_exception_rule_is_covered():
    error_rules = {rule.id for rule in registry.error_rules()}
    assert error_rules == set(RAISED_BY_A_MODEL) | NOT_RAISED_BY_A_MODEL


@pytest.mark.parametrize("rule_id", sorted(RAISED_BY_A_MODEL))
def test_the_exception_is_one_error_finding(rule_id):
    name, target, reported_as = RAISED_BY_A_MODEL[rule_id]
    errors = [f for f in findings_of(name, target) if f.level is Level.ERROR]
    assert [f.rule_id for f in errors] == [reported_as], [(f.rule_id, f.message) for f in errors]
    (finding,) = errors
    assert finding_properties(finding).get("braintraceError"), finding_properties(finding)
    rule = registry.all_rules()[rule_id]
    if reported_as != rule_id:
        # merged with the compiler's own ERROR record of a kind the exception rule names
        assert finding_properties(finding)["braintraceKind"] in rule.error.kinds
    # the user's line, not the factory's: the factory is only a related location
    factory = next(loc for loc in finding.related if loc.label == "target factory")
    if rule_id != "ETL111":  # a bad option is the factory's own fault
        assert finding.line != factory.line


def test_tracing_and_compiling_are_told_apart():
    (trace,) = [f for f in findings_of("errors_trace.py", "etrace_target_wrong_shape") if f.rule_id == "ETL100"]
    (compile_,) = [f for f in findings_of("errors_compile.py", "etrace_target_two_hidden_states_in_one_equation")
                   if f.rule_id == "ETL106"]
    assert (finding_properties(trace)["phase"], finding_properties(compile_)["phase"]) == ("trace", "compile")
    # the shapes the step was traced with are what a shape error is measured against
    assert trace.message.startswith("the step does not trace with the example inputs (5,) float32: "
                                    "TypeError: dot_general requires contracting dimensions")


def test_a_unit_mismatch_names_both_units_on_the_line_that_writes_the_state():
    (finding,) = [f for f in findings_of("errors_units.py", "etrace_target_unit_swap") if f.rule_id == "ETL101"]
    assert "mV" in finding.message and "mA" in finding.message
    assert finding.message.index("mV") < finding.message.index("mA")  # held, then written


def test_braintraces_own_unit_check_names_both_units():
    exc = ValueError("The input/output unit of the state ('v',) does not match. \nInput unit: mV\n"
                     "Output unit: mA\n")
    rule = classify_error(exc)
    message, _ = rule.describe(exc, Compilation(error=exc))
    assert rule.id == "ETL101"
    assert message == "unit mismatch: state ('v',) holds mV but the step writes it with mA"
    # what a reader sees: the state by name
    assert plain_text(message) == "unit mismatch: state v holds mV but the step writes it with mA"


def test_a_param_write_is_reported_where_it_happens_and_names_the_state():
    (finding,) = findings_of("errors_param_write.py", "etrace_target_hebbian")
    assert finding.rule_id == "ETL102"
    assert (finding.line, finding.location.column) == (16, 9)  # the `self.w.value` being assigned
    version = tuple(int(part) for part in re.findall(r"\d+", braintrace.__version__)[:3])
    if version >= (0, 2, 8):
        assert "ParamState w is written" in finding.message
    else:  # 0.2.6 names the state by its repr only: the message does not guess a name
        assert finding.message.startswith("a ParamState is written inside the online step")


def test_a_canonicalisation_that_does_not_settle_shows_every_equation_it_was_rewriting():
    (finding,) = [f for f in findings_of("errors_compile.py", "etrace_target_canonicalisation_limit")
                  if f.rule_id == "ETL107"]
    assert [(loc.label, loc.line) for loc in finding.related if loc.label == "also involved"] == [
        ("also involved", 46)]


def _raised(exc_type, message):
    """An exception as the compiler raises it: no frame of user code on its traceback."""
    return exc_type(message)


@pytest.mark.parametrize("exc, rule_id", [
    (_raised(NotImplementedError, "ETP primitive etp_mv found inside a scan/while/cond body that the compiler "
                                  "could not flatten."), "ETL104"),
    (_raised(NotImplementedError, "Currently, we do not support the weight states are used within a scan "
                                  "function."), "ETL105"),
    (_raised(NotImplementedError, "Weight state used inside a while loop; while bodies cannot participate"),
     "ETL105"),
    (_raised(NotImplementedError, "Currently, we do not support the hidden states are computed within a cond "
                                  "function."), "ETL103"),
    (_raised(ValueError, "Currently, we only support one hidden state in a single equation. \n..."), "ETL106"),
    (_raised(braintrace.CompilationError, "canonicalize_control_flow did not reach a fixpoint within 64 sweeps"),
     "ETL107"),
    (_raised(braintrace.NotSupportedError, "Error: the shapes of the hidden states are not consistent. \n"),
     "ETL109"),
    (_raised(NotImplementedError, "An ETP relation outside a descended scan targets hidden state(s)"), "ETL110"),
    (_raised(braintrace.NotSupportedError, "The parameter state \"w\" is rewritten in the model."), "ETL102"),
    (_raised(KeyError, "an error of the compiler nobody has seen"), "ETL199"),
])
def test_compiler_exceptions_map_to_their_rule(exc, rule_id):
    assert classify_error(exc).id == rule_id


def test_an_exception_raised_from_user_code_while_tracing_is_a_trace_failure():
    try:
        {}["missing"]
    except KeyError as exc:
        assert classify_error(exc).id == "ETL100"


def test_two_units_in_one_expression_are_named_on_that_expression():
    (finding,) = findings_of("errors_units.py", "etrace_target_unitless_bias")
    assert finding.rule_id == "ETL101"
    assert finding.message == "unit mismatch: mA and a unitless value meet in one expression"
    with open(fixture("compiler", "errors_units.py"), encoding="utf-8") as handle:
        line = handle.read().splitlines()[finding.line - 1]
    assert line.index("braintrace.matmul(x, self.w.value) + self.b.value") + 1 == finding.location.column
