"""Every compiler record and compiler error becomes a finding with the right rule on the right line."""

from __future__ import annotations

import glob
import os
from types import SimpleNamespace

import braintrace
import pytest

from etrace_lint import registry
from etrace_lint.findings import Level, Location
from etrace_lint.rules_compiler import classify_error, finding_from_record
from helpers import FIXTURES, assert_fixture, fixture, lint_file, run_cli

INSTALLED_KINDS = {kind.value for kind in braintrace.DiagnosticKind}
# fixture file -> DiagnosticKind values it needs (skipped on a braintrace without them)
NEEDS = {"output_bypass.py": {"output_bypass_dropped", "output_bypasses_hidden"}}

COMPILER_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "compiler", "*.py")))
CLEAN_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "clean", "*.py")))


@pytest.mark.parametrize("path", COMPILER_FIXTURES, ids=os.path.basename)
def test_fixture_reports_exactly_its_markers(path):
    missing = NEEDS.get(os.path.basename(path), set()) - INSTALLED_KINDS
    if missing:
        pytest.skip(f"braintrace {braintrace.__version__} has no {sorted(missing)}")
    assert_fixture(path)


@pytest.mark.parametrize("path", CLEAN_FIXTURES, ids=os.path.basename)
def test_clean_models_have_no_warning(path):
    findings, errors = lint_file(path)
    assert not errors
    assert [f for f in findings if f.level is not Level.NOTE] == []
    # the relations are there, as notes
    assert any(f.rule_id == "ETL001" for f in findings)


def test_every_installed_diagnostic_kind_has_exactly_one_rule():
    owners = {}
    for rule in registry.active_rules().values():
        for kind in rule.kinds:
            assert kind not in owners, f"{kind} is claimed by {owners[kind]} and {rule.id}"
            owners[kind] = rule.id
    missing = INSTALLED_KINDS - set(owners)
    assert not missing, f"DiagnosticKind values without a rule: {sorted(missing)}"


def test_info_kinds_are_note_rules():
    for rule in registry.active_rules().values():
        if "relation_included" in rule.kinds or "scan_unrolled" in rule.kinds:
            assert rule.level is Level.NOTE


class _Locator:
    """Stands in for a compiled model: nothing to look up, everything falls back to the factory."""

    factory = Location("/project/model.py", 7)

    def __getattr__(self, name):
        return lambda *args, **kwargs: None

    def first(self, *candidates):
        return next((c for c in candidates if c is not None), self.factory)


def _record(kind: str, level: str = "warning", message: str = "something happened"):
    return SimpleNamespace(kind=SimpleNamespace(value=kind), level=SimpleNamespace(value=level),
                           message=message, primitive=None, weight_path=None, hidden_paths=(), context={})


def test_a_kind_this_release_does_not_know_still_shows():
    finding = finding_from_record(_record("brand_new_kind_from_the_future"), _Locator(), "model")
    assert finding.rule_id == registry.GENERIC_RECORD_RULE
    assert finding.properties["braintraceKind"] == "brand_new_kind_from_the_future"
    assert finding.level is Level.WARNING
    assert finding.location == _Locator.factory


# Kinds that today's compilers emit only from internal passes that a whole
# model does not reach (transition_tail_bounded has no emitting site at all,
# scan-body ETP ops are unrolled before the relation pass sees them, nested
# jits are inlined first): the record -> rule mapping is checked directly.
@pytest.mark.parametrize("kind, rule_id, level", [
    ("scan_descent_skipped", "ETL014", Level.WARNING),
    ("primitive_inside_nested_jit", "ETL021", Level.WARNING),
    ("primitive_inside_control_flow", "ETL022", Level.WARNING),
    ("multi_output_primitive_detected", "ETL023", Level.NOTE),
    ("pytree_weight_leaf_ambiguous", "ETL024", Level.WARNING),
    ("transition_tail_bounded", "ETL027", Level.NOTE),
])
def test_records_without_a_model_fixture_map_to_their_rule(kind, rule_id, level):
    record = _record(kind, level.value if level is not Level.NOTE else "info")
    finding = finding_from_record(record, _Locator(), "model")
    assert (finding.rule_id, finding.level) == (rule_id, level)


def _raised(exc_type, message):
    """An exception as the compiler raises it: no frame of user code on its traceback."""
    return exc_type(message)


@pytest.mark.parametrize("exc, rule_id", [
    (_raised(NotImplementedError, "ETP primitive etp_mv found inside a scan/while/cond body."), "ETL104"),
    (_raised(NotImplementedError, "Currently, we do not support the weight states are used within a scan "
                                  "function."), "ETL105"),
    (_raised(ValueError, "Currently, we only support one hidden state in a single equation. \n..."), "ETL106"),
    (_raised(braintrace.CompilationError, "canonicalize_control_flow did not reach a fixpoint within 64 sweeps"),
     "ETL107"),
    (_raised(braintrace.NotSupportedError, "Error: the shapes of the hidden states are not consistent. \n"),
     "ETL109"),
    (_raised(NotImplementedError, "An ETP relation outside a descended scan targets hidden state(s)"), "ETL110"),
    (_raised(ValueError, "The input/output unit of the state ('v',) does not match. \nInput unit: mV"), "ETL101"),
    (_raised(KeyError, "an error of the compiler nobody has seen"), "ETL199"),
])
def test_compiler_exceptions_map_to_their_rule(exc, rule_id):
    assert classify_error(exc).id == rule_id


def test_an_exception_raised_from_user_code_while_tracing_is_a_trace_failure():
    try:
        {}["missing"]
    except KeyError as exc:
        assert classify_error(exc).id == "ETL100"


def test_compiler_warnings_and_jax_noise_stay_off_the_terminal():
    proc = run_cli(fixture("compiler", "relations.py"), fixture("compiler", "control_flow.py"),
                   "--no-cache", "-j", "1")
    assert proc.returncode == 1, proc.stderr
    assert "ETL005" in proc.stdout
    for noise in ("Warning", "warn(", "non-parametric-tail", "DeprecationWarning"):
        assert noise not in proc.stderr, proc.stderr
