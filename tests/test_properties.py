"""Properties that hold for every model, checked on randomly generated ones.

Each example is a stack of braintrace and plain-JAX layers written to a real
file (see ``model_factory``), linted in-process, and compared with what
braintrace's own ``CompilationReport`` says about an identical fresh model.
The profile is deterministic (derandomized, no example database) so CI sees
the same examples on every run.
"""

from __future__ import annotations

import re
import warnings

import braintrace
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from model_factory import LAYER_KINDS, OPS, WRAPS, Layer, ModelSpec, write_model

from etrace_lint.analysis.loaded_target import LoadedTarget
from etrace_lint.config.settings import EngineSettings
from etrace_lint.core.findings import Location
from etrace_lint.engine.lint import lint_model
from etrace_lint.writers.properties import finding_properties

# DiagnosticKind value of an exclusion -> the rule that reports it
EXCLUSION_RULE = {
    "relation_excluded_no_paramstate": "ETL002",
    "relation_excluded_non_temporal": "ETL003",
    "relation_excluded_shape_mismatch": "ETL004",
    "relation_excluded_weight_to_weight": "ETL005",
}
# braintrace 0.2.6 adds no same-step gradient: a weight reaching no hidden state gets none, and ETL209
# takes the place of ETL003 for it
REPLACING = {"ETL209": "ETL003"}
EXCLUDING_RULES = frozenset(EXCLUSION_RULE.values()) | {"ETL012"} | set(REPLACING)
NON_TEMPORAL, WEIGHT_TO_WEIGHT = "relation_excluded_non_temporal", "relation_excluded_weight_to_weight"
RELATION_RULE = "ETL001"
PLAIN_OP_RULE = "ETL201"
WEIGHT_RULES = EXCLUDING_RULES | {RELATION_RULE, PLAIN_OP_RULE}
SCAN_RULES = frozenset({"ETL010", "ETL011", "ETL013", "ETL014", "ETL015"})
COND_RULES = frozenset({"ETL008", "ETL009"})

layers = st.builds(
    Layer,
    kind=st.sampled_from(LAYER_KINDS),
    op=st.sampled_from(OPS),
    size=st.integers(min_value=2, max_value=5),
    wrap=st.sampled_from(WRAPS),
)
model_specs = st.builds(
    ModelSpec,
    n_in=st.integers(min_value=2, max_value=4),
    layers=st.lists(layers, min_size=1, max_size=4).map(tuple),
    readout=st.sampled_from(OPS + (None,)),
    n_out=st.integers(min_value=1, max_value=3),
)

PROFILE = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _dotted(path) -> str:
    return ".".join(str(part) for part in path)


def _report_exclusions(generated) -> dict[str, str | None] | None:
    """braintrace's own answer for a fresh copy of the model; None when it does not compile."""
    model, inputs = generated.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            graph = braintrace.compile_etrace_graph(model, *inputs, include_hidden_perturb=True)
        except Exception:  # the linter must then report an error finding instead
            return None
    return {_dotted(path): reason for path, reason in braintrace.CompilationReport(graph).excluded_weights}


def _lint(generated):
    model, inputs = generated.build()
    factory = Location(generated.path, generated.factory_line)
    loaded = LoadedTarget(None, "generated", model, inputs, factory_location=factory)
    return lint_model(loaded, EngineSettings()).findings


def _describe(generated, findings) -> str:
    lines = [f"  {f.line}: {f.rule_id} {finding_properties(f).get('weight', '')} {f.message[:100]}" for f in findings]
    return f"\n{generated.source}\nfindings:\n" + "\n".join(lines)


def _check_locations(generated, findings) -> None:
    for finding in findings:
        for loc in (finding.location, *finding.related):
            assert loc.path == generated.path and 1 <= loc.line <= generated.n_lines, (
                f"{finding.rule_id} points outside the model file: {loc}")
        weight = finding_properties(finding).get("weight")
        if finding.rule_id in WEIGHT_RULES and weight:
            truth = generated.truth_for_path(weight)
            assert truth is not None, f"{finding.rule_id} names an unknown weight {weight}"
            # a weight used inside a scan body may be shown on the scan call
            allowed = truth.lines | truth.enclosing
            assert finding.line in allowed, (
                f"{finding.rule_id} for {weight} on line {finding.line}, not on {sorted(allowed)}")
        if finding.rule_id in SCAN_RULES:
            assert finding.line in generated.scans, f"{finding.rule_id} not on a scan line: {finding.line}"
            length = re.search(r"length[= ](\d+)", finding.message)
            if length:
                assert generated.scans[finding.line] == int(length.group(1)), (
                    f"{finding.rule_id} about a scan of length {length.group(1)} on the line of a scan "
                    f"of length {generated.scans[finding.line]}")
        if finding.rule_id in COND_RULES:
            assert finding.line in generated.conds, f"{finding.rule_id} not on a cond line: {finding.line}"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_models")


_counter = iter(range(10**6))


def _evidence_rules(properties: dict) -> set:
    return {entry.get("rule") for entry in properties.get("staticEvidence", ()) if isinstance(entry, dict)}


def _blocked_only_by(findings, weight: str) -> set:
    """The weights the compiler names as standing between ``weight`` and a hidden state (from the
    blocking-weight locations of its finding); {None} when it names none, which no set of readouts holds."""
    return {loc.label.removeprefix("blocking weight ") for f in findings
            if finding_properties(f).get("weight") == weight
            and finding_properties(f).get("braintraceKind") == WEIGHT_TO_WEIGHT
            for loc in f.related if loc.label.startswith("blocking weight ")} or {None}


@PROFILE
@given(spec=model_specs)
# a plain-op weight whose hidden state also reaches the output (an info record names the weight)
@example(spec=ModelSpec(2, (Layer("lif", "plain", 2),), readout="nn_linear", n_out=1))
# several scans: records about the later ones must not land on the first
@example(spec=ModelSpec(3, (Layer("rnn", "plain", 4, "scan_long"), Layer("leak", "etp_matmul", 4, "scan_long"),
                            Layer("linear", "nn_linear", 4, "scan_short")), readout="plain"))
# every layer kind and wrap at once
@example(spec=ModelSpec(3, (Layer("linear", "etp_matmul"), Layer("gru"), Layer("lif", "etp_matmul", 3, "scan_short"),
                            Layer("leak", "nn_linear", 4, "cond")), readout="etp_matmul"))
def test_generated_models_match_the_compilers_report(spec, model_dir):
    generated = write_model(spec, str(model_dir), f"model_{next(_counter)}")
    findings = _lint(generated)  # must return, whatever the model
    detail = _describe(generated, findings)
    _check_locations(generated, findings)

    report = _report_exclusions(generated)
    if report is None:
        assert any(f.level.value == "error" for f in findings), "the compiler fails, the linter is silent" + detail
        return

    excluded_by_rule: dict[str, set[str]] = {}
    learning = set()
    for finding in findings:
        properties = finding_properties(finding)
        weight = properties.get("weight")
        if weight and finding.rule_id in EXCLUDING_RULES:
            excluded_by_rule.setdefault(weight, set()).add(REPLACING.get(finding.rule_id, finding.rule_id))
        elif weight and RELATION_RULE in {finding.rule_id} | _evidence_rules(properties):
            # the compiler connects it: ETL001, or a verdict that took its place (ETL208: connected, yet
            # no online gradient) and keeps it as static evidence
            learning.add(weight)
    not_learning = {w: rules for w, rules in excluded_by_rule.items() if w not in learning}
    plain = {t.attr for t in generated.weights.values() if not t.etp}

    # every weight braintrace leaves out is either reported by an exclusion rule or a plain op
    assert set(report) == set(not_learning) | plain, (
        f"report excludes {sorted(report)}, linter {sorted(not_learning)} + plain ops {sorted(plain)}" + detail)
    readouts = {finding_properties(f).get("weight") for f in findings if f.rule_id in REPLACING or (
                f.rule_id == EXCLUSION_RULE[NON_TEMPORAL]
                and finding_properties(f).get("braintraceKind") == NON_TEMPORAL)}
    # on braintrace 0.2.6 such a weight gets no gradient at all, whatever the compiler's reason: ETL209 says so
    untrained = {finding_properties(f).get("weight") for f in findings if f.rule_id in REPLACING}
    for weight, reason in report.items():
        if weight in untrained:
            continue
        if reason is not None:
            expected = {EXCLUSION_RULE[reason]}
            if reason == WEIGHT_TO_WEIGHT and _blocked_only_by(findings, weight) <= readouts:
                # behind weights that reach no hidden state, it reaches none either: a readout's note
                expected = {EXCLUSION_RULE[NON_TEMPORAL]}
            assert expected <= not_learning[weight], (
                f"{weight}: report says {reason}, linter {sorted(not_learning[weight])}" + detail)
        elif weight not in plain:
            assert "ETL012" in not_learning[weight], f"{weight} excluded without a reason" + detail

    flagged = {finding_properties(f).get("weight") for f in findings if f.rule_id == PLAIN_OP_RULE}
    direct = {t.attr for t in generated.weights.values() if not t.etp and t.feeds_hidden_directly}
    assert direct <= flagged <= plain, (
        f"{PLAIN_OP_RULE} flags {sorted(flagged)}; plain ops {sorted(plain)}, "
        f"feeding a hidden state directly {sorted(direct)}" + detail)
