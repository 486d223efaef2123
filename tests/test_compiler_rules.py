"""Every compiler record becomes a finding with the right rule, level and line."""

from __future__ import annotations

import glob
import os
import re
from types import SimpleNamespace

import braintrace
import pytest
from helpers import FIXTURES, expected_markers, fixture, lint_file, lint_shared
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.core import registry
from etrace_lint.core.findings import Finding, Level, Location
from etrace_lint.core.rule import RecordRule
from etrace_lint.engine.rules_compiler import findings_from_records
from etrace_lint.writers.properties import finding_properties

INSTALLED_KINDS = {kind.value for kind in braintrace.DiagnosticKind}
# fixture file -> DiagnosticKind values it needs (skipped on a braintrace without them)
NEEDS = {"output_bypass.py": {"output_bypass_dropped", "output_bypasses_hidden"}}

# compiler/errors_*.py belong to test_compiler_errors, compiler/locations_*.py to test_locations
RECORD_FIXTURES = sorted(p for p in glob.glob(os.path.join(FIXTURES, "compiler", "*.py"))
                         if not os.path.basename(p).startswith(("errors_", "locations_")))
CLEAN_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "clean", "*.py")))

# Kinds no model reaches through compile_etrace_graph in braintrace 0.2.6 or 0.2.8:
# - primitive_inside_nested_jit: extract_module_info inlines every jit call
#   (top level and inside scan/while/cond bodies) before the relation pass that
#   emits it, so that pass never meets a jit equation;
# - pytree_weight_leaf_ambiguous: emitted when the backward walk from an ETP op's
#   weight misses every leaf of the ParamState that an identical walk just found;
#   both walks follow the same producers, so the fallback cannot fire;
# - transition_tail_bounded: declared in DiagnosticKind but emitted nowhere.
# Their mapping is checked with constructed records below.
UNREACHABLE_KINDS = {"primitive_inside_nested_jit", "pytree_weight_leaf_ambiguous", "transition_tail_bounded"}


def linted(path: str):
    """One lint per fixture target for the whole session (the corpus tests of other files read it too)."""
    return lint_shared(path)


def reported_pairs(path: str, findings) -> set[tuple[int, str]]:
    """(line, rule) of every warning or error, and of every note whose rule the file marks."""
    marked = {rule for _, rule in expected_markers(path) | expected_markers(path, optional=True)}
    return {(f.line, f.rule_id) for f in findings if f.level is not Level.NOTE or f.rule_id in marked}


def assert_matches_markers(path: str):
    findings, errors = linted(path)
    assert not errors, [e.message for e in errors]
    stray = [f for f in findings if os.path.abspath(f.path) != os.path.abspath(path)]
    assert not stray, f"reported outside the fixture: {[(f.rule_id, f.path, f.line) for f in stray]}"
    actual = reported_pairs(path, findings)
    expected, optional = expected_markers(path), expected_markers(path, optional=True)
    detail = "\n".join(f"  {f.line} {f.rule_id} {f.level.value} {f.message[:100]}" for f in findings)
    assert expected <= actual and actual - expected <= optional, (
        f"missing {sorted(expected - actual)}, unexpected {sorted(actual - expected - optional)}\n{detail}")
    return findings


def _skip_without_kinds(path: str) -> None:
    missing = NEEDS.get(os.path.basename(path), set()) - INSTALLED_KINDS
    if missing:
        pytest.skip(f"braintrace {braintrace.__version__} has no {sorted(missing)}")


@pytest.mark.parametrize("path", RECORD_FIXTURES, ids=os.path.basename)
def test_fixture_reports_exactly_its_markers(path):
    _skip_without_kinds(path)
    assert_matches_markers(path)


@pytest.mark.parametrize("path", CLEAN_FIXTURES, ids=os.path.basename)
def test_clean_models_have_no_warning(path):
    findings, errors = linted(path)
    assert not errors
    # braintrace 0.2.6 adds no same-step gradient: a stateless readout (ETL209), and a layer whose new
    # state only a same-step path carries to the output (ETL208), do not learn online there
    untrained = set() if braintrace_adapter.adds_same_step_gradients() else {"ETL208", "ETL209"}
    assert [(f.rule_id, f.line, f.message) for f in findings
            if f.level is not Level.NOTE and f.rule_id not in untrained] == []
    # the relations are there, as notes (or, on 0.2.6, as the finding that replaces a relation that trains nothing)
    assert any(f.rule_id == "ETL001" or f.rule_id == "ETL208" and "ETL208" in untrained for f in findings)


def test_every_installed_diagnostic_kind_has_exactly_one_rule_at_each_level():
    owners = {}
    for rule in registry.active_rules().values():
        if not isinstance(rule, RecordRule):
            continue
        for kind in rule.kinds:
            for level in rule.record_levels or ("",):
                assert (kind, level) not in owners, (
                    f"{kind} at {level!r} is claimed by {owners[(kind, level)]} and {rule.id}")
                owners[(kind, level)] = rule.id
    missing = INSTALLED_KINDS - {kind for kind, _ in owners}
    assert not missing, f"DiagnosticKind values without a rule: {sorted(missing)}"


def _emitted_levels() -> dict[str, set[str]]:
    """DiagnosticKind value -> levels the installed compiler emits it with, read from its source."""
    pattern = re.compile(r"kind=DiagnosticKind\.(\w+),\s*level=DiagnosticLevel\.(\w+)")
    root = os.path.dirname(braintrace.__file__)
    levels: dict[str, set[str]] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py") or name.endswith("_test.py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                for kind, level in pattern.findall(handle.read()):
                    levels.setdefault(braintrace.DiagnosticKind[kind].value, set()).add(level.lower())
    return levels


def test_every_level_the_compiler_emits_a_kind_with_has_a_rule_that_takes_it():
    levels = _emitted_levels()
    assert levels, "no emit site found in the installed braintrace"
    for kind, emitted in levels.items():
        for level in emitted:
            rule = registry.rule_for_record_kind(kind, level)
            assert kind in rule.kinds, (kind, level, rule.id)
            if rule.record_levels:
                assert level in rule.record_levels, (kind, level, rule.id)


def test_each_reachable_record_rule_has_a_fixture_line():
    marked = set()
    for path in glob.glob(os.path.join(FIXTURES, "compiler", "*.py")):  # errors_*.py included
        marked |= {rule for _, rule in expected_markers(path) | expected_markers(path, optional=True)}
    for rule in registry.active_rules().values():
        reachable = set(rule.record_kinds) - UNREACHABLE_KINDS
        if reachable:
            assert rule.id in marked, f"{rule.id} ({sorted(reachable)}) has no '# expect' line in a fixture"


class _Locator:
    """Stands in for a compiled model: nothing to look up, everything falls back to the factory."""

    factory = Location("/project/model.py", 7)
    factory_related = Location("/project/model.py", 7, label="target factory")

    def __getattr__(self, name):
        return lambda *args, **kwargs: None

    def first(self, *candidates):
        return next((c for c in candidates if c is not None), self.factory)


def finding_of(record: SimpleNamespace, locator: object = None) -> Finding:
    """The one finding a compilation that emitted only ``record`` shows, by the engine's own path."""
    compilation = braintrace_adapter.Compilation(records=[braintrace_adapter.record_view(record)])
    findings, _ = findings_from_records(compilation, locator or _Locator(), "model")
    (finding,) = findings
    return finding


def _record(kind: str, level: str = "warning", message: str = "something happened", **fields):
    values = dict(kind=SimpleNamespace(value=kind), level=SimpleNamespace(value=level), message=message,
                  primitive=None, weight_path=None, hidden_paths=(), context={})
    values.update(fields)
    return SimpleNamespace(**values)


def test_a_kind_this_release_does_not_know_still_shows():
    finding = finding_of(_record("brand_new_kind_from_the_future"))
    assert finding.rule_id == registry.GENERIC_RECORD_RULE
    assert finding_properties(finding)["braintraceKind"] == "brand_new_kind_from_the_future"
    assert finding.level is Level.WARNING
    assert finding.location == _Locator.factory


@pytest.mark.parametrize("kind, rule_id, level", [
    ("primitive_inside_nested_jit", "ETL021", Level.WARNING),
    ("pytree_weight_leaf_ambiguous", "ETL024", Level.WARNING),
    ("transition_tail_bounded", "ETL027", Level.NOTE),
])
def test_records_no_model_reaches_map_to_their_rule(kind, rule_id, level):
    record = _record(kind, "info" if level is Level.NOTE else level.value, weight_path=("layer", "w"))
    finding = finding_of(record)
    assert (finding.rule_id, finding.level) == (rule_id, level)
    assert finding_properties(finding)["braintraceKind"] == kind
    assert finding_properties(finding)["weight"] == "layer.w"


def test_the_rule_level_wins_over_the_record_level_and_the_record_level_is_kept():
    # scan_unroll_skipped is info when descent takes over, a warning when the scan stays opaque; what
    # happens to the weights is reported by the rules about them, so both are notes
    info = finding_of(_record("scan_unroll_skipped", "info"))
    warning = finding_of(_record("scan_unroll_skipped", "warning"))
    assert (info.rule_id, info.level, warning.level) == ("ETL011", Level.NOTE, Level.NOTE)
    levels = (finding_properties(info)["braintraceLevel"], finding_properties(warning)["braintraceLevel"])
    assert levels == ("info", "warning")
    # an ordinary readout learns exactly from same-step gradients: braintrace warns, the rule notes
    readout = finding_of(_record("relation_excluded_non_temporal", "warning", weight_path=("out", "weight")))
    assert (readout.rule_id, readout.level) == ("ETL003", Level.NOTE)


def test_one_kind_graded_two_ways_goes_to_two_rules():
    # an ETP op left in a loop: excluded with a warning, or refused (the policy's error) and the model fails
    excluded = finding_of(_record("primitive_inside_control_flow", "warning"))
    refused = finding_of(_record("primitive_inside_control_flow", "error"))
    assert (excluded.rule_id, excluded.level) == ("ETL022", Level.WARNING)
    assert (refused.rule_id, refused.level) == ("ETL104", Level.ERROR)


def test_an_included_relation_names_the_weight_and_its_hidden_states():
    findings = assert_matches_markers(fixture("compiler", "relations.py"))
    included = {f.line: f for f in findings if f.rule_id == "ETL001"}
    assert included[20].message == "Wz.weight learns online: its matmul here drives h"
    assert finding_properties(included[20])["weight"] == "Wz.weight"
    assert finding_properties(included[20])["weightPath"] == ["Wz", "weight"]


def test_a_weight_to_weight_exclusion_points_at_the_blocking_weight():
    findings = assert_matches_markers(fixture("compiler", "relations.py"))
    excluded = next(f for f in findings if f.rule_id == "ETL005")
    labels = {loc.label: loc.line for loc in excluded.related}
    assert labels["blocking weight Wh.weight"] == 22
    assert labels["Wr.weight is created here"] == 13
    assert labels["target factory"] == 27
    assert excluded.message.startswith("Wr.weight reaches a hidden state only through Wh.weight's op (line 22), "
                                       "so the compiler excludes Wr.weight: it will not learn online.")
    assert "non-parametric-tail" in finding_properties(excluded)["braintraceMessage"]


def test_one_weight_in_the_iterations_of_an_unrolled_scan_is_one_finding_that_says_which():
    findings = assert_matches_markers(fixture("compiler", "control_flow.py"))
    excluded = [f for f in findings if f.rule_id == "ETL005" and f.target == "etrace_target_short_scan"]
    assert len(excluded) == 1, [f.message for f in excluded]
    assert finding_properties(excluded[0])["iterations"] == [1, 2]
    assert "iterations 1-2 of the 3 unrolled iterations" in excluded[0].message
    assert excluded[0].flow, "the merged finding keeps the route of the weight"


@pytest.fixture(scope="module")
def cli_run():
    """One command-line run, JSON out, of a fixture whose compile warns and one with an invalid option pair."""
    import json

    proc = run_cli(fixture("compiler", "relations.py"), fixture("compiler", "errors_options.py"),
                   "--output-format", "json", "--no-cache", "-j", "1")
    assert proc.returncode == 1, proc.stderr
    return proc, json.loads(proc.stdout)["findings"]


def _in_file(findings, name: str) -> list[dict]:
    return [f for f in findings if os.path.basename(f["location"]["path"]) == name]


def test_compiler_warnings_and_jax_noise_stay_off_the_terminal(cli_run):
    proc, findings = cli_run
    assert "ETL005" in {f["rule"] for f in _in_file(findings, "relations.py")}
    for noise in ("Warning", "warn(", "non-parametric-tail", "DeprecationWarning", "jax"):
        assert noise not in proc.stderr, proc.stderr


FACTORY_STATES = '''
import brainstate
import braintrace
import jax.numpy as jnp


class Cell(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = braintrace.nn.Linear(3, 4)

    def init_state(self, batch_size=None, **kwargs):
        # a hidden state kept in a dict inside a list: still the model's state
        self.memory = [{"v": brainstate.HiddenState(jnp.zeros((batch_size, 4)))}]

    def update(self, x):
        v = self.memory[0]["v"]
        v.value = 0.9 * v.value + self.fc(x)
        return v.value


def etrace_target():
    model = Cell()
    brainstate.nn.init_all_states(model, batch_size=2)
    return model, (jnp.ones((2, 3)),)


def etrace_target_uninitialised():
    return Cell(), (jnp.ones((1, 3)),), {"batch_size": 1}
'''


def test_states_the_factory_initialised_are_kept_and_missing_ones_are_made(tmp_path):
    path = tmp_path / "factory_states.py"
    path.write_text(FACTORY_STATES, encoding="utf-8")
    findings, errors = lint_file(str(path))
    assert not errors, [e.message for e in errors]
    # re-initialised without the factory's batch of 2, the step would not trace
    assert not [f for f in findings if f.level is Level.ERROR], [f.message for f in findings]
    connected = {(f.target, finding_properties(f).get("weight")) for f in findings if f.rule_id == "ETL001"}
    assert connected == {("etrace_target", "fc.weight"), ("etrace_target_uninitialised", "fc.weight")}


def test_sparse_n_without_recurrent_mixing_is_an_invalid_option_pair_not_a_trace_failure(cli_run):
    errors = [f for f in _in_file(cli_run[1], "errors_options.py") if f["level"] == "error"]
    assert [f["rule"] for f in errors] == ["ETL111"], errors
    assert "include_recurrent_mixing" in errors[0]["message"] and "sparse_n=2" in errors[0]["message"]


def test_a_weight_the_final_graph_connects_gets_one_verdict_under_map():
    """brainstate.nn.Map's probe passes emit records the compiler's final relations contradict."""
    findings, _ = linted(fixture("compiler", "map_batched.py"))
    by_weight: dict = {}
    for finding in findings:
        by_weight.setdefault(finding_properties(finding).get("weight"), set()).add(finding.rule_id)
    for cell in ("cell.module", "module.rnn"):  # a mapped cell; the whole network mapped
        assert by_weight[f"{cell}.Wh.weight"] == {"ETL001"}, by_weight
        assert by_weight[f"{cell}.Wz.weight"] == {"ETL001"}, by_weight
        assert by_weight[f"{cell}.Wr.weight"] == {"ETL005"}, by_weight
        states = {h for f in findings if finding_properties(f).get("weight", "").startswith(cell) for h in
                  finding_properties(f).get("hiddenStates", ())}
        assert states == {f"{cell}.h"}, states  # the state by its attribute, not by Map's store of it


def test_every_factor_of_a_lora_op_is_said_to_learn():
    findings, _ = linted(fixture("compiler", "lora_factors.py"))
    included = {finding_properties(f).get("weight") for f in findings if f.rule_id == "ETL001"}
    assert included == {"A", "B", "w_in.weight"}, findings
    (a,) = [f for f in findings if f.rule_id == "ETL001" and finding_properties(f).get("weight") == "A"]
    assert a.message.startswith("A learns online") and "h" in finding_properties(a)["hiddenStates"]
