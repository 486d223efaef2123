"""Findings point at the user's line, also where the compiler rewrote the jaxpr first."""

from __future__ import annotations

import dataclasses
import os

import brainstate
import braintrace
import jax
import saiunit
from helpers import REPO, fixture, lint_shared
from test_compiler_rules import assert_matches_markers, linted

import etrace_lint
from etrace_lint.analysis import braintrace_adapter as bt
from etrace_lint.analysis import jaxpr_view as jv
from etrace_lint.analysis.locate import Locator
from etrace_lint.core.findings import Location
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.rules_compiler import findings_from_records
from etrace_lint.engine.targets import load_target

REWRITTEN = fixture("compiler", "locations_rewritten.py")


def test_rewritten_control_flow_and_inlined_jits_keep_their_lines():
    assert_matches_markers(REWRITTEN)


def _compile(path: str, factory: str):
    (spec,) = discover([f"{path}::{factory}"], REPO).targets
    loaded = load_target(spec)
    bt.ensure_states(loaded.model, loaded.batch_size)
    compilation = bt.compile_model(loaded.model, loaded.inputs, loaded.compile_options)
    return loaded, compilation


def test_an_op_inside_a_cached_library_jit_is_found_through_its_call_site():
    loaded, compilation = _compile(REWRITTEN, "etrace_target_jitted_library_op")
    assert compilation.raw_jaxpr is not None

    def line_of_non_temporal(comp):
        locator = Locator(loaded.model, comp.module_info, loaded.factory_location, comp.traced_jaxpr,
                          comp.raw_jaxpr)
        (finding,) = [f for f in findings_from_records(comp, locator, "t")[0] if f.rule_id == "ETL003"]
        return finding.line

    # the jit body's frames are all braintrace's: without the call site the
    # best left is the line creating the weight
    assert line_of_non_temporal(dataclasses.replace(compilation, raw_jaxpr=None)) == 16
    assert line_of_non_temporal(compilation) == 23


def test_a_skip_record_lands_on_the_control_flow_the_compiler_had_to_look_at():
    findings, _ = linted(REWRITTEN)
    by_rule = {(f.target, f.rule_id): f.line for f in findings}
    # a plain cond (line 30) and a plain scan (line 50) come first in the step
    assert by_rule[("etrace_target_two_conds", "ETL009")] == 32
    assert by_rule[("etrace_target_two_long_scans", "ETL011")] == 55


def test_a_record_about_a_state_points_at_the_line_creating_it():
    findings, _ = linted(fixture("compiler", "relation_details.py"))
    lines = {(f.target, f.rule_id): f.line for f in findings}
    assert lines[("etrace_target_merged_groups", "ETL028")] == 73  # self.v = HiddenState(...)
    assert lines[("etrace_target_foreign_state", "ETL029")] == 94  # the module-level state


def test_states_created_inside_a_library_fall_back_to_the_factory():
    findings, _ = linted(fixture("clean", "lstm.py"))
    (merged,) = [f for f in findings if f.rule_id == "ETL028"]
    factory = next(loc for loc in merged.related if loc.label == "target factory")
    assert (merged.path, merged.line) == (factory.path, factory.line)
    # the ETP ops are the library's too: their line is the user's call of the cell
    assert {f.line for f in findings if f.rule_id == "ETL001"} == {11}


def test_a_weight_finding_also_shows_where_the_weight_is_created():
    findings, _ = linted(fixture("compiler", "relation_details.py"))
    (partial,) = [f for f in findings if f.rule_id == "ETL006"]
    assert partial.line == 40
    assert ("w1 is created here", 35) in {(loc.label, loc.line) for loc in partial.related}


def test_an_error_of_the_compiler_points_at_the_equation_it_refused():
    findings, _ = linted(fixture("compiler", "control_flow.py"))
    (refused,) = [f for f in findings if f.rule_id == "ETL103"]
    assert refused.line == 85  # the while producing the hidden state, not the factory (175)


def test_frames_of_the_libraries_and_of_the_linter_are_never_the_users():
    for module in (jax, brainstate, braintrace, saiunit, etrace_lint):
        assert jv.is_library_file(module.__file__), module.__name__
    assert jv.is_library_file(os.path.join(os.path.dirname(bt.__file__), "engine.py"))
    assert not jv.is_library_file(REWRITTEN)


def test_with_nothing_to_go_by_the_factory_is_the_answer():
    factory = Location(REWRITTEN, 60)
    locator = Locator(brainstate.nn.Module(), None, factory)
    assert locator.first(locator.of_state(("nope",)), locator.of_primitive("etp_mv")) == factory


def _column_of(path: str, line: int, code: str) -> int:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()[line - 1].index(code) + 1


def test_columns_count_characters_on_lines_with_non_ascii_names():
    path = fixture("compiler", "locations_unicode.py")
    findings, errors = lint_shared(path)
    (plain,) = [f for f in findings if f.rule_id == "ETL201"]
    assert (plain.line, plain.location.column) == (24, _column_of(path, 24, "self.h.value @"))
    (units,) = [f for f in findings if f.rule_id == "ETL101"]
    assert units.line == 23 and units.location.column == _column_of(path, 23, "self.w_in(x) * u.mV + x * u.mA")
    (factory,) = [e for e in errors if "factory_fails_after_alpha" in e.message]
    assert (factory.location.line, factory.location.column) == (44, _column_of(path, 44, "α + 1"))


def test_a_state_a_library_creates_is_placed_where_the_model_puts_that_library_module():
    path = fixture("compiler", "locations_library_states.py")
    findings, errors = lint_shared(path)
    assert not errors, [e.message for e in errors]
    cell = _column_of(path, 12, "self.cell")
    merged = {f.target: f for f in findings if f.rule_id == "ETL028"}
    assert set(merged) == {"initialised_in_the_factory", "initialised_by_the_linter"}
    for finding in merged.values():
        assert (finding.line, finding.location.column) == (12, cell), finding.message


def test_a_weight_a_base_class_creates_is_placed_alike_in_the_base_and_its_subclasses():
    """A subclass that inherits ``__init__`` points at the same creation as the base class does: the
    ``brainstate.ParamState(...)`` call, not the base's ``self.w = `` assignment for one and the call for the other."""
    path = fixture("own", "clipped_weight.py")
    created = set()
    for factory in ("etrace_target_minimum_etp", "etrace_target_clip_max_etp", "etrace_target_clip_range_etp"):
        findings, _ = lint_shared(f"{path}::{factory}")
        created |= {(r.line, r.column) for f in findings for r in f.related
                    if r.label.endswith("created here")}
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "self.w = brainstate.ParamState(" in text)
    assert created == {(line, lines[line - 1].index("brainstate.ParamState(") + 1)}
