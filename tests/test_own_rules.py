"""Rules of our own: what the compiler does not say."""

from __future__ import annotations

import glob
import json
import os
import re

import braintrace
import pytest
from helpers import FIXTURES, assert_fixture, lint_file, lint_shared
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter
from etrace_lint.core import registry
from etrace_lint.writers.properties import finding_properties

OWN_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "own", "*.py")))
BRAINTRACE = tuple(int(part) for part in re.findall(r"\d+", braintrace.__version__)[:3])
ONLINE_GRAD = os.path.join(FIXTURES, "own", "online_grad", "not_differentiable.py")
PLAIN_OP = os.path.join(FIXTURES, "own", "plain_op.py")
OPAQUE = os.path.join(FIXTURES, "own", "opaque_transforms.py")


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as handle:
        return next(n for n, line in enumerate(handle, start=1) if text in line)


@pytest.mark.parametrize("path", OWN_FIXTURES, ids=os.path.basename)
def test_fixture_reports_exactly_its_markers(path):
    assert_fixture(path, shared=True)


def test_online_gradient_fixture_reports_exactly_its_markers():
    findings = assert_fixture(ONLINE_GRAD, check_online_grad=True)
    loop = line_of(ONLINE_GRAD, "settled = jax.lax.while_loop")
    hidden_while = {f.rule_id for f in findings if f.target.endswith("hidden_while") and f.line == loop}
    if BRAINTRACE < (0, 2, 8):  # no D-RTRL step through the loop's hidden state
        assert "ETL205" in hidden_while, hidden_while
    else:  # 0.2.8 keeps the loop as an opaque forward node instead: its gradients are cut, and said so
        assert "ETL017" in hidden_while and "ETL205" not in hidden_while, hidden_while


def test_plain_op_finding_names_weight_hidden_state_and_op():
    findings, _ = lint_shared(PLAIN_OP + "::etrace_target_plain_input")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert "w_in" in finding.message and "h" in finding.message and "dot_general" in finding.message
    assert not finding_properties(finding)["partial"]
    created = line_of(PLAIN_OP, "self.w_in = brainstate.ParamState")
    assert any(loc.label == "weight created here" and loc.line == created for loc in finding.related)


def test_partly_plain_weight_is_told_apart_from_a_weight_that_never_learns():
    findings, _ = lint_shared(PLAIN_OP + "::etrace_target_partly_plain")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert finding_properties(finding)["partial"] and "learns online through an ETP op" in finding.message


def test_an_event_driven_sparse_weight_is_pointed_at_the_sparse_etp_layer():
    findings, _ = lint_shared(PLAIN_OP + "::etrace_target_event_sparse_recurrent")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert finding_properties(finding)["weight"] == "rec.weight"
    assert "braintrace.nn.SparseLinear" in finding.message and "braintrace.matmul" not in finding.message


def test_opaque_transform_is_a_related_location():
    findings, _ = lint_shared(OPAQUE + "::etrace_target_checkpointed")
    (finding,) = [f for f in findings if f.rule_id == "ETL202"]
    assert finding.line == line_of(OPAQUE, "drive = jax.checkpoint")
    assert finding_properties(finding)["transform"] == "jax.checkpoint"
    applied = line_of(OPAQUE, "drive(x, self.w.value)")
    assert any(loc.label == "`jax.checkpoint` applied here" and loc.line == applied for loc in finding.related)


def test_vmap_finding_quotes_braintrace():
    findings, _ = lint_shared(os.path.join(FIXTURES, "own", "vmapped_weights.py") + "::etrace_target_ensemble")
    (finding,) = [f for f in findings if f.rule_id == "ETL203"]
    assert "ws" in finding.message and "etp_mv" in finding.message and "is mapped over by `vmap`" in finding.message
    assert "decomposed into standard JAX ops under vmap" in finding_properties(finding)["braintraceWarning"]
    assert [f for f in findings if f.rule_id == "ETL201"] == []  # one finding for one cause


def test_online_gradient_check_runs_only_when_asked(monkeypatch):
    rule = registry.all_rules()["ETL205"]
    assert rule.opt_in_flag == "--check-online-grad"
    calls = []
    original = braintrace_adapter.online_gradient_error

    def spy(model, inputs):
        calls.append(model)
        return original(model, inputs)

    monkeypatch.setattr(braintrace_adapter, "online_gradient_error", spy)
    path = ONLINE_GRAD + "::etrace_target_readout_while"
    findings, _ = lint_file(path)
    assert calls == [] and [f for f in findings if f.rule_id == "ETL205"] == []
    findings, errors = lint_file(path, check_online_grad=True)
    assert len(calls) == 1 and not errors
    assert [f.rule_id for f in findings if f.rule_id == "ETL205"] == ["ETL205"]


def test_online_gradient_check_leaves_the_model_as_it_was():
    import brainstate
    import jax.numpy as jnp
    import numpy as np

    from etrace_lint.discovery.discover import discover
    from etrace_lint.engine.targets import load_target

    for factory in ("etrace_target_readout_scan", "etrace_target_readout_while"):
        (spec,) = discover([f"{ONLINE_GRAD}::{factory}"], FIXTURES).targets
        model = load_target(spec).model
        brainstate.nn.init_all_states(model)
        model.h.value = jnp.arange(4.0)
        before = {p: np.asarray(s.value) for p, s in brainstate.graph.states(model).items()}
        error = braintrace_adapter.online_gradient_error(model, (jnp.ones((4,)),))
        assert (error is None) == (factory == "etrace_target_readout_scan")
        after = brainstate.graph.states(model)
        assert before.keys() == after.keys()
        for path in before:
            np.testing.assert_array_equal(before[path], np.asarray(after[path].value))


RULES_DIR = os.path.join(os.path.dirname(FIXTURES), "..", "rules")


def test_every_rule_is_documented_beside_a_file_named_after_it_and_imports_no_jax_at_module_level():
    import ast

    rules = registry.all_rules()
    stems = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(RULES_DIR, "etl*.py"))}
    assert stems == {f"{rule.id.lower()}_{rule.name.replace('-', '_')}" for rule in rules.values()}
    for rule in rules.values():
        for section in ("What it does", "Why it matters", "Example", "How to fix"):
            assert rule.section(section), f"{rule.id} lacks '## {section}'"
        stem = f"{rule.id.lower()}_{rule.name.replace('-', '_')}"
        assert os.path.isfile(os.path.join(RULES_DIR, stem + ".md")), f"{rule.id} has no {stem}.md"
        tree = ast.parse(open(os.path.join(RULES_DIR, stem + ".py"), encoding="utf-8").read())
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name.split(".")[0] for n in top for a in n.names} | {
            (n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
        assert not names & {"jax", "brainstate", "braintrace"}, f"{rule.id} imports {names} at module level"


BUFFERED = os.path.join(FIXTURES, "own", "buffered_input.py")


def test_buffered_input_names_weight_buffer_and_membrane():
    findings, _ = lint_shared(BUFFERED + "::etrace_target_buffered")
    (finding,) = [f for f in findings if f.rule_id == "ETL206"]
    properties = finding_properties(finding)
    assert properties["weight"] == "w_in.weight" and properties["state"] == "neu.i_in"
    assert properties["stateKind"] == "ShortTermState" and "neu.V" in properties["hiddenStates"]
    assert "only in the next step" in finding.message
    created = line_of(BUFFERED, "self.i_in = brainstate.ShortTermState")
    assert any(loc.label == "neu.i_in created here" and loc.line == created for loc in finding.related)


def test_input_into_the_membrane_in_the_same_step_is_not_buffered():
    findings, _ = lint_shared(BUFFERED + "::etrace_target_direct")
    assert [f for f in findings if f.rule_id == "ETL206"] == []
    assert any(f.rule_id == "ETL001" and "w_in.weight" in f.message for f in findings)


def test_unused_state_is_said_to_be_unused():
    findings, _ = lint_shared(BUFFERED + "::etrace_target_unread")
    (finding,) = [f for f in findings if f.rule_id == "ETL029"]
    assert finding.message.startswith("spare is a state of the model that the step never reads or writes")


BRAINSPIKE_NET = '''\
import brainspike
import brainstate
import braintrace
import brainunit as u
import jax.numpy as jnp

import etrace_lint


class Net(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.neu = brainspike.iaf_psc_exp(8)
        self.w_in = braintrace.nn.Linear(5, 8)
        self.readout = braintrace.nn.LeakyRateReadout(8, 2, tau=10.0 * u.ms)

    def update(self, x):
        return self.readout(self.neu.update(self.w_in(x) * u.pA))


@etrace_lint.target(environ={"dt": "0.1 ms", "t": "0 ms"})
def iaf_net():
    model = Net()
    brainstate.nn.init_all_states(model)
    return model, jnp.ones(5)
'''


def test_brainspike_neuron_buffers_its_input_current(tmp_path):
    """brainspike's NEST neurons add the current they are given to V in the next step, through a
    ShortTermState: the input weight is told it learns nothing online, the readout learns."""
    pytest.importorskip("brainspike")
    (tmp_path / "iaf_net.py").write_text(BRAINSPIKE_NET, encoding="utf-8")
    proc = run_cli("iaf_net.py", "--no-cache", "--show-info", "--output-format", "json", cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    (buffered,) = [f for f in findings if f["rule"] == "ETL206"]
    assert buffered["location"]["line"] == BRAINSPIKE_NET.splitlines().index(
        "        return self.readout(self.neu.update(self.w_in(x) * u.pA))") + 1
    assert "w_in.weight" in buffered["message"] and "neu.i_0" in buffered["message"], buffered["message"]
    assert any(f["rule"] == "ETL001" and "readout" in f["message"] for f in findings)


MEAN_SUBTRACTED = os.path.join(FIXTURES, "own", "mean_subtracted.py")
BEFORE_RESET = os.path.join(FIXTURES, "own", "spikes_before_reset.py")
STATIC_READOUT = os.path.join(os.path.dirname(FIXTURES), "..", "examples", "models", "static_readout.py")
SHORT_TERM = os.path.join(FIXTURES, "own", "no_hidden_state.py") + "::etrace_target_short_term_recurrence"
CONV_BIAS = os.path.join(FIXTURES, "own", "conv_bias.py")
# the targets whose command-line output the tests below read: one run lints them all
CLI_TARGETS = (MEAN_SUBTRACTED + "::conv_norm_if", MEAN_SUBTRACTED + "::etrace_target_centered",
               MEAN_SUBTRACTED + "::normalised_input", BEFORE_RESET, STATIC_READOUT, SHORT_TERM, CONV_BIAS)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """The JSON output, notes shown, of one run over ``CLI_TARGETS``, and its cache folder, from which
    the plain runs of the same targets are served."""
    cache = str(tmp_path_factory.mktemp("own-cli") / "cache")
    result = run_cli(*CLI_TARGETS, "--show-info", "--output-format", "json", "--cache-dir", cache, "-j", "1")
    assert result.returncode == 1, result.stderr  # ETL210 and ETL204 are errors
    return json.loads(result.stdout)["findings"], cache


def _json_findings(cli_run, model: str) -> list[dict]:
    findings = [f for f in cli_run[0] if f["model"] == model]
    assert findings, f"no finding about {model}"
    return findings


def test_a_layer_norm_after_the_op_is_one_verdict_on_the_op_line_and_names_the_norm(cli_run):
    findings = _json_findings(cli_run, "conv_norm_if")
    verdicts = [f for f in findings if f.get("properties", {}).get("weight") == "conv.weight"]
    assert [f["rule"] for f in verdicts] == ["ETL207"], verdicts  # no "learns online" beside it
    (finding,) = verdicts
    assert finding["location"]["line"] == line_of(MEAN_SUBTRACTED, "current = self.norm(self.conv(x))")
    assert "mean-subtracting" in finding["message"] and "neu.V" in finding["message"]
    assert any(r["label"] == "the mean is subtracted here" for r in finding["related"]), finding["related"]


def test_the_hidden_notes_count_leaves_out_the_replaced_relation(cli_run):
    shown = _json_findings(cli_run, "etrace_target_centered")
    assert [f["rule"] for f in shown if f["level"] == "note"] == []  # its only relation is replaced
    result = run_cli(MEAN_SUBTRACTED + "::etrace_target_centered", "--cache-dir", cli_run[1], "--exit-zero")
    assert result.returncode == 0 and "1 model" in result.stdout, result.stdout + result.stderr
    assert "notes hidden" not in result.stdout, result.stdout


def test_a_norm_before_the_op_keeps_the_weight_learning(cli_run):
    findings = _json_findings(cli_run, "normalised_input")
    fc = {f["rule"] for f in findings if f.get("properties", {}).get("weight") == "fc.weight"}
    assert fc == {"ETL001"}


SAME_STEP = braintrace_adapter.adds_same_step_gradients()  # braintrace 0.2.8: a readout's same-step gradient


@pytest.mark.parametrize("factory, expected", [
    ("spikes_before_reset_leaky_readout", "ETL208"),
    ("spikes_after_reset_leaky_readout", "ETL001"),
    # the same-step path to a stateless readout trains them on 0.2.8; 0.2.6 adds no same-step gradient
    ("spikes_before_reset_stateless_readout", "ETL001" if SAME_STEP else "ETL208"),
])
def test_spikes_taken_before_the_reset_silence_the_learning_signal_only_behind_a_stateful_readout(
        cli_run, factory, expected):
    findings = _json_findings(cli_run, factory)
    for weight in ("rnn.w_in.weight", "rnn.w_rec.weight"):
        rules = {f["rule"] for f in findings if f.get("properties", {}).get("weight") == weight}
        assert rules == {expected}, (weight, rules)
    if expected == "ETL208":
        (finding, *_) = [f for f in findings if f["rule"] == "ETL208"]
        assert "vjp_method='multi-step'" in finding["message"] and "rnn.V" in finding["message"]


def _etl208(*args: str) -> dict[str, str]:
    """model -> the message of its ETL208 about rnn.w_in.weight, in a fresh run with ``args``."""
    done = run_cli(BEFORE_RESET + "::spikes_before_reset_leaky_readout", BEFORE_RESET + "::spikes_before_reset_silent",
                   "--output-format", "json", "--no-cache", *args)
    return {f["model"]: f["message"] for f in json.loads(done.stdout)["findings"]
            if f["rule"] == "ETL208" and f["properties"]["weight"] == "rnn.w_in.weight"}


def test_a_zero_online_gradient_no_measurement_backs_says_so_and_how_to_measure_it():
    unmeasured = "not measured: no online gradient of rnn.w_in.weight was compared with BPTT's in this run"
    how = "run with --verify, and give the target inputs that drive the model, @etrace_lint.target(verify="
    probed = _etl208("--probe")
    # the probe measures the spiking layer's zero against BPTT's non-zero gradient: the claim is backed
    assert unmeasured not in probed["spikes_before_reset_leaky_readout"]
    # a layer that never spikes on the probe's inputs: BPTT's gradient is zero too, nothing was compared
    assert unmeasured in probed["spikes_before_reset_silent"] and how in probed["spikes_before_reset_silent"]
    for message in _etl208("--no-probe").values():  # nothing measured at all
        assert unmeasured in message and how in message


def test_a_stateless_readout_is_untrained_exactly_where_braintrace_adds_no_same_step_gradient(cli_run):
    example = STATIC_READOUT
    findings = _json_findings(cli_run, "etrace_target_lstm_classifier")
    readout = [f for f in findings if f.get("properties", {}).get("weight") == "readout"]
    rules = {f["rule"] for f in readout}
    if SAME_STEP:
        assert "ETL209" not in rules and "ETL003" in rules, rules
    else:
        assert "ETL209" in rules and "ETL003" not in rules, rules
        (finding,) = [f for f in readout if f["rule"] == "ETL209"]
        assert f"braintrace {braintrace.__version__}" in finding["message"]
        assert finding["location"]["line"] == line_of(example, "return braintrace.matmul(")


def _compiler_reason(path: str, factory: str, weight: str) -> str | None:
    """What braintrace's own CompilationReport gives as the reason it excluded ``weight``."""
    import importlib.util
    import warnings

    import brainstate

    spec = importlib.util.spec_from_file_location("kept_kind_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, inputs = getattr(module, factory)()
    brainstate.nn.init_all_states(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = braintrace.compile_etrace_graph(model, *inputs, include_hidden_perturb=True)
    reasons = {".".join(map(str, p)): reason for p, reason in braintrace.CompilationReport(graph).excluded_weights}
    return reasons[weight]


def _kinds(findings: list[dict]) -> set:
    """The compiler record kinds the findings carry: their own, and those of the records they replaced."""
    own = {f["properties"]["braintraceKind"] for f in findings if "braintraceKind" in f["properties"]}
    return own | {e["braintraceKind"] for f in findings for e in f["properties"].get("staticEvidence", ())
                  if "braintraceKind" in e}


def test_a_verdict_that_replaces_a_compiler_record_keeps_its_kind(cli_run, tmp_path):
    reason = _compiler_reason(STATIC_READOUT, "etrace_target_lstm_classifier", "readout")
    assert reason == "relation_excluded_non_temporal"
    # ETL019's note (0.2.8) is another record of braintrace's, about the readout's output bypass: its own kind
    shown = [f for f in _json_findings(cli_run, "etrace_target_lstm_classifier")
             if f["properties"].get("weight") == "readout" and f["rule"] != "ETL019"]
    assert _kinds(shown) == {reason}, shown  # 0.2.8: ETL003's own; 0.2.6: kept by ETL209, which replaced it
    if SAME_STEP:
        return
    # a plain run, served from the cache or linting afresh with its notes only counted: ETL209 is all the
    # output says of the readout, and it keeps the kind, in the JSON output and the SARIF log alike
    for where in (("--cache-dir", cli_run[1]), ("--no-cache",)):
        sarif = tmp_path / f"{where[0].lstrip('-')}.sarif"
        plain = run_cli(STATIC_READOUT, "--output-format", "json", "--sarif", str(sarif), *where)
        readout = [f for f in json.loads(plain.stdout)["findings"] if f["properties"].get("weight") == "readout"]
        assert [f["rule"] for f in readout] == ["ETL209"], readout
        (evidence,) = readout[0]["properties"]["staticEvidence"]
        assert (evidence["rule"], evidence["braintraceKind"]) == ("ETL003", reason), where
        results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
        readout = [r for r in results if r.get("properties", {}).get("weight") == "readout"]
        assert [r["ruleId"] for r in readout] == ["ETL209"], readout
        (evidence,) = readout[0]["properties"]["staticEvidence"]
        assert (evidence["rule"], evidence["braintraceKind"]) == ("ETL003", reason), where


def test_a_model_braintrace_compile_refuses_does_not_pass(cli_run):
    result = run_cli(SHORT_TERM, "--cache-dir", cli_run[1])
    assert result.returncode == 1, result.stdout
    (line,) = [text for text in result.stdout.splitlines() if " ETL204 " in text]
    assert "braintrace.compile refuses this model" in line and "h (ShortTermState)" in line
    assert "make it brainstate.HiddenState" in line


VMAP_OF_ONE_ES_D_RTRL = os.path.join(FIXTURES, "fuzz", "fuzz_refused_vmap_of_one_under_es_d_rtrl.py")
CONV1D_UNDER_VMAP = os.path.join(FIXTURES, "fuzz", "fuzz_refused_conv1d_under_vmap_multi_step.py")


def test_a_learner_that_cannot_size_a_trace_is_a_refusal_on_the_ops_line():
    # pp_prop's traces take the op output's shape: (1, 2) from a vmap over a batch of one, for a state of (2,)
    findings, _ = lint_shared(VMAP_OF_ONE_ES_D_RTRL)
    (finding,) = [f for f in findings if f.rule_id == "ETL204"]
    assert finding.message.startswith("braintrace.compile(model, 'es_d_rtrl', ...) refuses this model")
    assert "l0_wa's `etp_mm` op gives (1, 2) where l0_h is (2,)" in finding.message
    assert "apply the op to the unbatched value" in finding.message
    assert "brainstate.transform.vmap" in open(finding.path, encoding="utf-8").read().splitlines()[finding.line - 1]
    assert set(finding.subject.weights) == {"l0_wa", "l0_wb"}


def test_a_vmap_decomposition_no_rule_names_leaves_the_refusal_reported():
    findings, _ = lint_shared(CONV1D_UNDER_VMAP)
    (finding,) = [f for f in findings if f.rule_id == "ETL204"]
    assert "braintrace.compile refuses this model" in finding.message
    # the vmap maps the conv's input only (batch dims (0, None)): braintrace has no batched conv, so the advice
    # is to drop the vmap, not to stop mapping a weight that was never mapped
    assert "a vmap over the input of its `etp_conv` op decomposed it" in finding.message
    assert "without the vmap" in finding.message and "maps the weight too" not in finding.message


def test_a_readout_note_never_calls_a_weight_feeding_a_short_term_state_exact():
    findings, _ = lint_shared(SHORT_TERM)
    for finding in findings:
        assert "which is exact for a readout" not in finding.message, finding.message


def _online_step_error(path: str, factory: str) -> str:
    """What one D-RTRL gradient step of braintrace's own learner raises on the fixture's target ("" if none)."""
    import importlib.util

    import brainstate
    import jax.numpy as jnp

    spec = importlib.util.spec_from_file_location("conv_bias_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with brainstate.environ.context(dt=1.0):
        model, inputs = getattr(module, factory)()
        learner = braintrace.D_RTRL(model)
        learner.compile_graph(*inputs)
        try:
            learner.etrace_grad(*(x[None] for x in inputs), step_fn=lambda *x: jnp.sum(learner(*x) ** 2),
                                reduction="sum", loss_output="scalar")
        except ValueError as exc:
            return str(exc)
    return ""


def test_a_conv_bias_is_reported_exactly_where_braintraces_online_step_raises(cli_run):
    path = CONV_BIAS
    findings = [f for f in cli_run[0] if f["model"] in ("channel_bias", "flat_bias")]
    flagged = {f["model"] for f in findings if f["rule"] == "ETL210"}
    assert flagged == {"channel_bias"}, findings
    (finding,) = [f for f in findings if f["rule"] == "ETL210"]
    assert finding["level"] == "error"
    assert "(1, 1, 3)" in finding["message"] and "shape (3,)" in finding["message"]
    assert not [f for f in findings if f["rule"] == "ETL001" and f["model"] == "channel_bias"
                and f["properties"].get("weight") == "conv.weight"]  # one verdict per weight
    assert "must produce an output with the same type" in _online_step_error(path, "channel_bias")
    assert _online_step_error(path, "flat_bias") == ""


def test_a_recurrence_kept_in_a_short_term_state_is_said_to_miss_its_past(cli_run):
    path = os.path.join(FIXTURES, "own", "no_hidden_state.py")
    findings = _json_findings(cli_run, "etrace_target_short_term_recurrence")
    by_weight = {}
    for finding in findings:
        by_weight.setdefault(finding["properties"].get("weight"), set()).add(finding["rule"])
    expected = "ETL211" if SAME_STEP else "ETL209"  # 0.2.8: same-step gradient only; 0.2.6: none at all
    assert by_weight["w_in.weight"] == by_weight["w_rec.weight"] == {expected}, by_weight
    line = line_of(path, "self.h.value = jnp.tanh(")
    for finding in findings:
        if finding["rule"] == expected:
            assert finding["level"] == "warning" and finding["location"]["line"] == line
        if finding["rule"] == "ETL211":
            assert "not BPTT's gradient" in finding["message"] and "h, a ShortTermState" in finding["message"]


INTEGER_PARAM = os.path.join(FIXTURES, "own", "integer_param.py")


def test_a_bfloat16_param_is_not_called_integer():
    # JAX differentiates bfloat16, which NumPy does not call inexact: ETL214's "JAX refuses its gradient" is untrue
    findings, _ = lint_shared(INTEGER_PARAM + "::etrace_target_bfloat16_gain")
    assert not [f for f in findings if f.rule_id == "ETL214"]


def test_an_integer_param_names_the_weight_its_dtype_and_the_fix_on_the_line_that_creates_it():
    findings, _ = lint_shared(INTEGER_PARAM + "::etrace_target_integer_gain")
    (finding,) = [f for f in findings if f.rule_id == "ETL214"]
    assert finding.line == line_of(INTEGER_PARAM, "self.gain = brainstate.ParamState(jnp.full((n,), 2, dtype=")
    # braintrace's own recipe, grad over model.states(brainstate.ParamState) of a D_RTRL learner, raises this
    assert finding.message.startswith("gain is a ParamState of int32, whose gradient JAX refuses")
    assert "raises TypeError 'grad requires real- or complex-valued inputs'" in finding.message
    assert finding.level.value == "error" and "floating dtype" in finding.message
    assert finding.subject.weight == "gain"
    assert not [f for f in findings if f.rule_id == "ETL201"]  # its advice, an ETP op, would not make it learn


WEIGHT_CAST = os.path.join(FIXTURES, "own", "weight_cast.py")


def test_a_weight_used_only_cast_to_integer_is_named_with_its_dtype_and_replaces_learns_online():
    findings, _ = lint_shared(WEIGHT_CAST + "::etrace_target_quantized_etp")
    (finding,) = [f for f in findings if f.rule_id == "ETL215"]
    assert finding.line == line_of(WEIGHT_CAST, "q = jnp.round(self.w.value).astype(jnp.int32)")
    assert finding.message.startswith("w is converted to int32 here (`convert_element_type`)")
    assert "online or by BPTT" in finding.message and "straight-through estimator" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w"
    # braintrace connects the int32 operand of its matmul and calls w learning: this finding replaces that
    assert not [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "w"]


def test_a_weight_used_only_as_a_mask_is_not_told_to_use_an_etp_op():
    findings, _ = lint_shared(WEIGHT_CAST + "::etrace_target_mask_only")
    (finding,) = [f for f in findings if f.rule_id == "ETL215"]
    assert finding.message.startswith("gate is turned into a boolean mask here (`gt`)")
    assert not [f for f in findings if f.rule_id == "ETL201"]  # no ETP op gives a comparison a gradient


def test_a_pruning_mask_of_a_weight_that_still_learns_is_not_reported():
    findings, _ = lint_shared(WEIGHT_CAST + "::etrace_target_pruned_etp")
    assert not [f for f in findings if f.rule_id == "ETL215"]


HARD_SPIKE = os.path.join(FIXTURES, "own", "hard_spike.py")


def test_a_hard_spike_names_the_weight_its_hidden_state_the_threshold_and_a_surrogate():
    findings, _ = lint_shared(HARD_SPIKE + "::etrace_target_hard_spike_greater")
    (finding,) = [f for f in findings if f.rule_id == "ETL216"]
    assert finding.line == line_of(HARD_SPIKE, "return (v > 1.0).astype(jnp.float32)")
    assert finding.message.startswith("lif.w_in.weight gets no gradient, online or by BPTT: lif.v reaches the "
                                      "step's output only through this hard threshold (`>`)")
    assert "braintools.surrogate.sigmoid" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "lif.w_in.weight"
    assert finding.subject.hidden_states == ("lif.v",)
    # braintrace connects the weight's matmul to lif.v and calls it learning: this finding replaces that
    assert not [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "lif.w_in.weight"]


def test_a_hard_spike_replaces_the_advice_that_would_not_make_the_weight_learn():
    heaviside, _ = lint_shared(HARD_SPIKE + "::etrace_target_hard_spike_heaviside")
    assert [f.message.split(": ")[1].split(", a spike")[0] for f in heaviside if f.rule_id == "ETL216"] == [
        "lif.v reaches the step's output only through this hard threshold (`jnp.heaviside`)"]
    plain, _ = lint_shared(HARD_SPIKE + "::etrace_target_hard_spike_plain_matmul")
    assert [f.rule_id for f in plain if f.level.value != "note"] == ["ETL216"]  # not ETL201's "use an ETP op"
    before_reset, _ = lint_shared(HARD_SPIKE + "::etrace_target_hard_spike_before_reset")
    assert [f.rule_id for f in before_reset if f.level.value != "note"] == ["ETL216"]  # not ETL208's
    multi_step, _ = lint_shared(HARD_SPIKE + "::etrace_target_hard_spike_multi_step")
    assert "ETL216" in {f.rule_id for f in multi_step} and "ETL213" not in {f.rule_id for f in multi_step}


def test_a_surrogate_spike_or_a_float_path_around_the_spike_is_not_reported():
    for factory in ("etrace_target_surrogate_spike", "etrace_target_hard_spike_membrane_read"):
        findings, _ = lint_shared(HARD_SPIKE + "::" + factory)
        assert not [f for f in findings if f.rule_id == "ETL216"], factory
        assert [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "lif.w_in.weight"], factory


UNSTABLE_LEAK = os.path.join(FIXTURES, "own", "unstable_leak.py")


def test_an_unstable_leak_names_the_factor_its_hidden_state_its_start_and_the_fix():
    findings, _ = lint_shared(UNSTABLE_LEAK + "::etrace_target_unstable_leak")
    (finding,) = [f for f in findings if f.rule_id == "ETL217"]
    assert finding.message.startswith("tau multiplies h's previous value in its update and all 4 of its values "
                                      "start at 1 or more in magnitude (up to 1.05), so h and the eligibility "
                                      "traces braintrace keeps of it do not decay")
    assert "braintrace.element_wise(tau, weight_fn=jax.nn.sigmoid)" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "tau"
    assert finding.subject.hidden_states == ("h",)
    assert finding_properties(finding)["unstableUnitCount"] == 4
    # it says nothing of tau's online gradient: D-RTRL's is exact, and braintrace's "learns online" stays
    assert [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "tau"]


def test_an_unstable_leak_counts_the_units_that_do_not_decay():
    findings, _ = lint_shared(UNSTABLE_LEAK + "::etrace_target_one_unit_unstable")
    (finding,) = [f for f in findings if f.rule_id == "ETL217"]
    assert "1 of its 4 values starts at 1 or more in magnitude (up to 1)" in finding.message
    assert finding_properties(finding)["unstableUnitCount"] == 1 and finding_properties(finding)["unitCount"] == 4


ZERO_HIDDEN_DIVISOR = os.path.join(FIXTURES, "own", "zero_hidden_divisor.py")


def test_a_zero_hidden_divisor_names_the_state_its_line_its_zero_units_and_the_fix():
    findings, _ = lint_shared(ZERO_HIDDEN_DIVISOR + "::etrace_target_zero_normaliser")
    (finding,) = [f for f in findings if f.rule_id == "ETL218"]
    assert finding.message.startswith("this line divides by g's value at the step's start, and all 4 units of g "
                                      "start at zero before the first step: the first training step divides by zero")
    assert "g + eps" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == ""
    assert finding.subject.hidden_states == ("g",)
    assert finding.line == line_of(ZERO_HIDDEN_DIVISOR, "drive / self.g.value  # expect: ETL218")
    created = line_of(ZERO_HIDDEN_DIVISOR, "self.g = brainstate.HiddenState(jnp.full")
    assert any(loc.label == "hidden state created here" and loc.line == created for loc in finding.related)
    assert finding_properties(finding)["zeroUnitCount"] == 4 and finding_properties(finding)["unitCount"] == 4


def test_a_zero_hidden_divisor_counts_the_units_that_start_at_zero():
    findings, _ = lint_shared(ZERO_HIDDEN_DIVISOR + "::etrace_target_one_unit_zero")
    (finding,) = [f for f in findings if f.rule_id == "ETL218"]
    assert "1 of the 4 units of g starts at zero" in finding.message
    assert finding_properties(finding)["zeroUnitCount"] == 1 and finding_properties(finding)["unitCount"] == 4


ZERO_WEIGHT_DIVISOR = os.path.join(FIXTURES, "own", "zero_weight_divisor.py")


def test_a_zero_weight_divisor_names_the_weight_its_line_its_zero_entries_and_the_fix():
    findings, _ = lint_shared(ZERO_WEIGHT_DIVISOR + "::etrace_target_zero_tau")
    (finding,) = [f for f in findings if f.rule_id == "ETL228"]
    assert finding.message.startswith("this line divides by tau's value, and all 4 entries of tau start at zero "
                                      "before the first step: the first training step divides by zero")
    assert "by BPTT as much as online" in finding.message
    assert "braintrace.element_wise(tau, weight_fn=jax.nn.softplus)" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "tau"
    assert finding.line == line_of(ZERO_WEIGHT_DIVISOR, "0.1 / self.tau.value * (drive")
    created = line_of(ZERO_WEIGHT_DIVISOR, "self.tau = brainstate.ParamState(")
    assert any(loc.label == "weight created here" and loc.line == created for loc in finding.related)
    assert finding_properties(finding)["zeroUnitCount"] == 4 and finding_properties(finding)["unitCount"] == 4
    assert finding_properties(finding)["throughEtpOp"] is False
    # the rule claims no verdict: ETL201's plain `div` stays beside it
    assert any(f.rule_id == "ETL201" and f.line == finding.line for f in findings)


def test_a_zero_weight_divisor_counts_the_entries_that_start_at_zero():
    findings, _ = lint_shared(ZERO_WEIGHT_DIVISOR + "::etrace_target_one_zero_tau")
    (finding,) = [f for f in findings if f.rule_id == "ETL228"]
    assert "1 of the 4 entries of tau starts at zero" in finding.message
    assert finding_properties(finding)["zeroUnitCount"] == 1 and finding_properties(finding)["unitCount"] == 4


def test_a_zero_weight_divisor_read_through_element_wise_is_reported_and_its_softplus_fix_is_not():
    findings, _ = lint_shared(ZERO_WEIGHT_DIVISOR + "::etrace_target_etp_tau")
    (finding,) = [f for f in findings if f.rule_id == "ETL228"]
    assert finding.message.startswith("this line divides by braintrace.element_wise's value of tau")
    assert finding_properties(finding)["throughEtpOp"] is True
    findings, _ = lint_shared(ZERO_WEIGHT_DIVISOR + "::etrace_target_softplus_tau")
    assert not [f for f in findings if f.rule_id == "ETL228"]


SATURATED_WEIGHT_FN = os.path.join(FIXTURES, "own", "saturated_weight_fn.py")


def test_a_saturated_weight_fn_names_the_weight_its_line_its_saturated_units_its_slope_and_the_fix():
    findings, _ = lint_shared(SATURATED_WEIGHT_FN + "::etrace_target_sigmoid_of_plus_15")
    (finding,) = [f for f in findings if f.rule_id == "ETL219"]
    assert finding.message.startswith("tau's weight_fn `sigmoid` is saturated: its slope at tau's starting value is "
                                      "below 1e-4 in all 4 units (3.6e-07 at the smallest), and "
                                      "braintrace.element_wise on this line multiplies their gradient")
    assert "start tau where `sigmoid` is steep" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "tau"
    assert finding.line == line_of(SATURATED_WEIGHT_FN, "weight_fn=jax.nn.sigmoid)  # expect: ETL219")
    created = line_of(SATURATED_WEIGHT_FN, "self.tau = brainstate.ParamState")
    assert any(loc.label == "weight created here" and loc.line == created for loc in finding.related)
    properties = finding_properties(finding)
    assert properties["saturatedUnitCount"] == 4 and properties["unitCount"] == 4
    assert properties["weightFn"] == "sigmoid" and 3e-7 < properties["smallestSlope"] < 4e-7
    # it says nothing of tau's online gradient against BPTT's (both are scaled alike): "learns online" stays
    assert [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "tau"]


def test_a_saturated_weight_fn_counts_the_saturated_units():
    findings, _ = lint_shared(SATURATED_WEIGHT_FN + "::etrace_target_one_unit_saturated")
    (finding,) = [f for f in findings if f.rule_id == "ETL219"]
    assert "below 1e-4 in 1 of its 4 units (6.2e-06 at the smallest)" in finding.message
    assert finding_properties(finding)["saturatedUnitCount"] == 1 and finding_properties(finding)["unitCount"] == 4


@pytest.mark.parametrize("factory", ["etrace_target_sigmoid_of_zero", "etrace_target_sigmoid_near_the_threshold",
                                     "etrace_target_exp_of_a_large_value", "etrace_target_no_weight_fn",
                                     "etrace_target_softmax", "etrace_target_plain_sigmoid"])
def test_a_steep_absent_or_not_element_wise_weight_fn_is_not_saturated(factory):
    findings, _ = lint_shared(SATURATED_WEIGHT_FN + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL219"], factory


STOPPED_WEIGHT = os.path.join(FIXTURES, "own", "stopped_weight.py")


def test_a_weight_under_stop_gradient_names_the_weight_the_stop_and_the_fix():
    findings, _ = lint_shared(STOPPED_WEIGHT + "::etrace_target_stopped_drive")
    (finding,) = [f for f in findings if f.rule_id == "ETL220"]
    assert finding.message.startswith("every use of w_in reaches the step's output and its states only through "
                                      "`jax.lax.stop_gradient` (on this line), so no gradient reaches w_in, online "
                                      "or by BPTT")
    assert "take it out of the stop_gradient" in finding.message and "brainstate.State" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w_in"
    assert finding.line == line_of(STOPPED_WEIGHT, "drive = jax.lax.stop_gradient(jnp.tanh(")
    assert finding_properties(finding)["stopGradientCount"] == 1
    # the stop, not a mean subtraction, zeroes its op's effect: ETL207 and the compiler's "learns online" stay quiet
    assert not [f for f in findings if f.subject.weight == "w_in" and f.rule_id != "ETL220"]


def test_a_weight_stopped_twice_is_reported_once_with_the_other_stop_related():
    findings, _ = lint_shared(STOPPED_WEIGHT + "::etrace_target_stopped_twice")
    (finding,) = [f for f in findings if f.rule_id == "ETL220"]
    assert "(on this line and 1 other)" in finding.message
    assert finding_properties(finding)["stopGradientCount"] == 2
    other = line_of(STOPPED_WEIGHT, "return self.h.value + jax.lax.stop_gradient(jnp.sum(self.w_in.value))")
    assert any(loc.label == "also stopped here" and loc.line == other for loc in finding.related)


@pytest.mark.parametrize("factory", ["etrace_target_stopped_and_plain", "etrace_target_stopped_hidden",
                                     "etrace_target_straight_through", "etrace_target_stopped_etp_operand",
                                     "etrace_target_stopped_product_etp_operand"])
def test_a_weight_that_still_gets_a_gradient_is_not_under_stop_gradient(factory):
    # a use outside the stop, a stop on a hidden state, the straight-through form; and an ETP op whose weight
    # operand is stopped (the weight itself, or a product of it, which braintrace's relations follow and the flow's
    # layout-only weights do not), which braintrace's online rule still trains (its online gradient is not zero)
    findings, _ = lint_shared(STOPPED_WEIGHT + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL220"], factory


ONE_UNIT_SOFTMAX = os.path.join(FIXTURES, "own", "one_unit_softmax.py")


def test_a_softmax_over_one_unit_names_the_weight_the_axis_the_shape_and_the_fix():
    findings, _ = lint_shared(ONE_UNIT_SOFTMAX + "::etrace_target_batch_scores")
    (finding,) = [f for f in findings if f.rule_id == "ETL221"]
    assert finding.message.startswith("w_score reaches the step's output only through `jax.nn.softmax` over axis 1 "
                                      "of a (2, 1) array (on this line)")
    assert "is exactly 1 whatever its input" in finding.message and "online or by BPTT" in finding.message
    assert "normalise over an axis of several units (axis=0, of size 2, say)" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w_score"
    assert finding.line == line_of(ONE_UNIT_SOFTMAX, "return self.h.value * jax.nn.softmax(scores, axis=1)")
    properties = finding_properties(finding)
    assert properties["softmax"] == "jax.nn.softmax" and properties["axes"] == [1]
    assert properties["inputShape"] == [2, 1] and properties["softmaxCount"] == 1
    # 0.2.6's "a readout gets no online gradient" (ETL209) would send the user to upgrade: it stays quiet
    assert not [f for f in findings if f.subject.weight == "w_score" and f.rule_id != "ETL221"]


def test_a_softmax_over_one_unit_names_the_hidden_states_it_starves():
    findings, _ = lint_shared(ONE_UNIT_SOFTMAX + "::etrace_target_one_unit_head")
    found = {f.subject.weight: f for f in findings if f.rule_id == "ETL221"}
    assert sorted(found) == ["w_in", "w_out", "w_rec"]
    assert found["w_in"].message.startswith("w_in reaches the step's output only through h, whose value reaches it "
                                            "only through `jax.nn.softmax` over axis 0 of a (1,) array")
    assert found["w_in"].subject.hidden_states == ("h",) and found["w_out"].subject.hidden_states == ()
    assert "use `jax.nn.sigmoid`" in found["w_out"].message
    # the compiler's "learns online" of w_in's and w_rec's ETP ops is replaced
    assert not [f for f in findings if f.rule_id == "ETL001"]


def test_a_log_softmax_over_one_unit_is_exactly_zero():
    findings, _ = lint_shared(ONE_UNIT_SOFTMAX + "::etrace_target_one_unit_log_softmax")
    (finding,) = [f for f in findings if f.rule_id == "ETL221" and f.subject.weight == "w_out"]
    assert "`jax.nn.log_softmax` over axis 0 of a (1,) array" in finding.message
    assert "is exactly 0 whatever its input" in finding.message and "`jax.nn.log_sigmoid`" in finding.message


@pytest.mark.parametrize("factory", ["etrace_target_many_unit_head", "etrace_target_one_unit_and_value",
                                     "etrace_target_batch_scores_right_axis",
                                     "etrace_target_one_unit_softmax_etp_operand"])
def test_a_softmax_over_several_units_or_around_another_path_is_not_reported(factory):
    # the last: an ETP op whose weight operand is the softmax, which braintrace's online rule reads w through
    findings, _ = lint_shared(ONE_UNIT_SOFTMAX + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL221"], factory


ROUNDED_WEIGHT = os.path.join(FIXTURES, "own", "rounded_weight.py")


def test_a_rounded_weight_names_the_weight_the_rounding_and_the_straight_through_fix():
    findings, _ = lint_shared(ROUNDED_WEIGHT + "::etrace_target_rounded_plain_weight")
    (finding,) = [f for f in findings if f.rule_id == "ETL222"]
    assert finding.message.startswith("w reaches the step's output only through `jnp.floor` (on this line), whose "
                                      "derivative is zero everywhere")
    assert "so w gets none, online or by BPTT" in finding.message
    assert "`x + jax.lax.stop_gradient(jnp.floor(x) - x)`" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w"
    assert finding.line == line_of(ROUNDED_WEIGHT, "w_q = jnp.floor(self.w.value * 8) / 8")
    properties = finding_properties(finding)
    assert properties["rounding"] == "jnp.floor" and properties["roundingCount"] == 1
    # its plain `mul` is not what starves it: ETL201's "use braintrace.element_wise" stays quiet
    assert not [f for f in findings if f.subject.weight == "w" and f.rule_id != "ETL222"]


def test_a_rounding_of_a_hidden_state_names_the_hidden_state_and_a_trunc_is_named_as_written():
    findings, _ = lint_shared(ROUNDED_WEIGHT + "::etrace_target_rounded_output")
    (finding,) = [f for f in findings if f.rule_id == "ETL222"]
    assert finding.message.startswith("w reaches the step's output only through h, whose value reaches it only "
                                      "through `jnp.round`")
    assert "round h with a straight-through estimator" in finding.message
    assert finding.subject.hidden_states == ("h",)
    assert not [f for f in findings if f.rule_id == "ETL001"]  # the compiler's "learns online" is replaced
    findings, _ = lint_shared(ROUNDED_WEIGHT + "::etrace_target_trunc_leak")
    (finding,) = [f for f in findings if f.rule_id == "ETL222"]
    assert finding.subject.weight == "leak" and "`jnp.trunc`" in finding.message
    assert not [f for f in findings if f.subject.weight == "leak" and f.rule_id != "ETL222"]


@pytest.mark.parametrize("factory", ["etrace_target_straight_through_round", "etrace_target_rounded_and_plain",
                                     "etrace_target_custom_jvp_straight_through", "etrace_target_rounded_input",
                                     "etrace_target_rounded_etp_weight"])
def test_a_weight_that_still_gets_a_gradient_is_not_reported_as_rounded(factory):
    # a straight-through estimator, written out or as a custom_jvp, a use around the rounding, a rounded input;
    # and an ETP op whose weight operand is the rounded weight, which braintrace's online rule still trains
    findings, _ = lint_shared(ROUNDED_WEIGHT + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL222"], factory


@pytest.mark.parametrize("target", [ROUNDED_WEIGHT + "::etrace_target_rounded_beside_etp",
                                    STOPPED_WEIGHT + "::etrace_target_stopped_beside_etp"])
def test_a_plain_path_through_a_zero_derivative_is_no_path_missing_from_the_online_gradient(target):
    # w learns through its ETP op; its other, plain use crosses a rounding or a stop_gradient, which passes no
    # gradient by BPTT either: ETL201's "that path is missing from its online gradient" would be false
    findings, _ = lint_shared(target)
    assert not [f for f in findings if f.rule_id == "ETL201"], target
    assert [f.subject.weight for f in findings if f.rule_id == "ETL001"] == ["w"]


RELU_CONSTRAINED = os.path.join(FIXTURES, "own", "relu_constrained_weight.py")


def test_a_relu_constraint_names_the_weight_its_dead_entries_what_braintrace_does_online_and_the_fix():
    findings, _ = lint_shared(RELU_CONSTRAINED + "::etrace_target_relu_etp")
    (finding,) = [f for f in findings if f.rule_id == "ETL223"]
    assert finding.message.startswith("`jax.nn.relu` on this line keeps w at or above 0, and its slope is 0 at 8 of "
                                      "the 16 entries of w, which start at or below 0: BPTT gives those entries no "
                                      "gradient")
    # braintrace.matmul reads w through the relu and leaves its slope out: online, the dead entries move
    assert "its online gradient of w is not BPTT's" in finding.message
    assert "jnp.abs of its initial value" in finding.message and "weight_fn=jnp.abs" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w"
    assert finding.line == line_of(RELU_CONSTRAINED, "w_pos = jax.nn.relu(self.w.value)  # expect: ETL223")
    labels = {loc.label for loc in finding.related}
    assert "weight created here" in labels and "the ETP op that reads w through jax.nn.relu" in labels
    properties = finding_properties(finding)
    assert properties["deadUnitCount"] == 8 and properties["unitCount"] == 16
    assert properties["constraint"] == "jax.nn.relu" and properties["floor"] == 0.0 and properties["readByEtpOp"]
    # it claims no verdict of the whole weight (its positive entries learn exactly): "learns online" stays
    assert [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "w"]


def test_a_relu_constraint_before_a_plain_op_leaves_the_online_gradient_to_etl201():
    findings, _ = lint_shared(RELU_CONSTRAINED + "::etrace_target_relu_plain")
    (finding,) = [f for f in findings if f.rule_id == "ETL223"]
    assert "braintrace's compiler reads" not in finding.message and not finding_properties(finding)["readByEtpOp"]
    assert [f for f in findings if f.rule_id == "ETL201" and f.subject.weight == "w"]


def test_a_floor_above_zero_counts_the_entries_below_it():
    findings, _ = lint_shared(RELU_CONSTRAINED + "::etrace_target_clip_etp")
    (finding,) = [f for f in findings if f.rule_id == "ETL223"]
    assert "`jnp.clip` on this line keeps w at or above 0.1, and its slope is 0 at 9 of the 16 entries" in (
        finding.message)
    assert finding_properties(finding)["floor"] == pytest.approx(0.1)


def test_a_relu_weight_fn_of_braintrace_matmul_is_etl219s():
    findings, _ = lint_shared(RELU_CONSTRAINED + "::etrace_target_relu_weight_fn")
    (finding,) = [f for f in findings if f.rule_id == "ETL219"]
    assert "below 1e-4 in 8 of its 16 units (0 at the smallest), and braintrace.matmul on this line" in finding.message
    assert "start those units of w above 0" in finding.message
    assert not [f for f in findings if f.rule_id == "ETL223"]


@pytest.mark.parametrize("factory", ["etrace_target_softplus_weight_fn", "etrace_target_abs_weight_fn",
                                     "etrace_target_relu_of_a_positive_init",
                                     "etrace_target_maximum_of_a_zero_init"])
def test_a_constraint_with_a_slope_at_every_starting_entry_is_not_reported(factory):
    # a weight_fn with a slope everywhere, a weight that starts above 0, and jnp.maximum at exactly 0 (JAX gives
    # each side of a tie half the slope)
    findings, _ = lint_shared(RELU_CONSTRAINED + "::" + factory)
    assert not [f for f in findings if f.rule_id in ("ETL219", "ETL223")], factory


ZERO_WEIGHT_PRODUCT = os.path.join(FIXTURES, "own", "zero_weight_product.py")


def test_a_zero_weight_product_names_both_factors_on_the_product_line_and_the_lora_start():
    findings, _ = lint_shared(ZERO_WEIGHT_PRODUCT + "::etrace_target_zero_lora")
    found = {f.subject.weight: f for f in findings if f.rule_id == "ETL224"}
    assert set(found) == {"w_a", "w_b"}
    finding = found["w_a"]
    assert finding.message.startswith("w_a is multiplied by w_b on this line and both start all zero: the gradient "
                                      "of each factor of a product is the other's value, zero")
    assert "neither gets any gradient, online or by BPTT" in finding.message
    assert "the input-facing factor random, only the output-facing one zero" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w_a"
    assert finding.subject.weights == ("w_b",)  # the other weights it names
    assert finding.line == line_of(ZERO_WEIGHT_PRODUCT, "w_eff = self.w.value + self.w_a.value @ self.w_b.value")
    assert "w_b created here" in {loc.label for loc in finding.related}
    properties = finding_properties(finding)
    assert properties["product"] == "@" and properties["productCount"] == 1
    # no gradient reaches them at all: ETL201's "use braintrace.matmul" would not give them one
    assert not [f for f in findings if f.rule_id == "ETL201"]


def test_a_zero_lora_layer_replaces_the_compilers_learns_online_and_names_its_kernel_init():
    findings, _ = lint_shared(ZERO_WEIGHT_PRODUCT + "::etrace_target_zero_lora_layer")
    (finding,) = [f for f in findings if f.rule_id == "ETL224"]
    assert finding.message.startswith("lora.weight holds both factors that `braintrace.lora_matmul` multiplies on "
                                      "this line, and both start all zero")
    assert "braintrace.nn.LoRA's kernel_init starts both" in finding.message
    assert not [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "lora.weight"]


@pytest.mark.parametrize("factory", ["etrace_target_usual_lora", "etrace_target_usual_lora_op",
                                     "etrace_target_random_lora_layer", "etrace_target_zero_factor_own_path",
                                     "etrace_target_zero_gain_etp", "etrace_target_squared_zero",
                                     "etrace_target_one_zero_weight"])
def test_a_product_one_of_whose_factors_moves_is_not_reported(factory):
    # a non-zero factor (the usual LoRA start), a zero factor with a path of its own, one that braintrace's online
    # rule reads through the product to an ETP op and moves, a weight times itself, one zero weight alone
    findings, _ = lint_shared(ZERO_WEIGHT_PRODUCT + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL224"], factory


SHIFT_REMOVED_BIAS = os.path.join(FIXTURES, "own", "shift_removed_bias.py")


def test_a_scalar_bias_before_a_softmax_names_the_weight_the_softmax_and_the_fix():
    findings, _ = lint_shared(SHIFT_REMOVED_BIAS + "::etrace_target_softmax_scalar_bias")
    (finding,) = [f for f in findings if f.rule_id == "ETL225"]
    assert finding.message.startswith("b (a scalar) is added uniformly along axis 0 of a (4,) value on this line, "
                                      "and the sum goes only into `jax.nn.softmax` over axis 0, which removes any "
                                      "constant shift along it")
    assert "its gradient, by BPTT and online, is zero up to float32 rounding" in finding.message
    assert "drop b, or give it one value per unit along axis 0" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "b"
    assert finding.line == line_of(SHIFT_REMOVED_BIAS, "return jax.nn.softmax(h + self.b.value)  # expect: ETL225")
    properties = finding_properties(finding)
    assert properties["normaliser"] == "jax.nn.softmax" and properties["axes"] == [0]
    assert properties["inputShape"] == [4] and properties["biasShape"] == [] and properties["sumCount"] == 1
    # 0.2.6's "a readout gets no online gradient" (ETL209) would send the user to upgrade: it stays quiet
    assert not [f for f in findings if f.subject.weight == "b" and f.rule_id != "ETL225"]


def test_a_bias_centred_inside_the_recurrence_replaces_the_plain_op_finding():
    findings, _ = lint_shared(SHIFT_REMOVED_BIAS + "::etrace_target_centred_scalar_bias")
    (finding,) = [f for f in findings if f.rule_id == "ETL225"]
    centring = line_of(SHIFT_REMOVED_BIAS, "centred = z - z.mean(-1, keepdims=True)")
    assert f"a subtraction of its mean over axis 0 on line {centring} (a layer norm's centring)" in finding.message
    assert "add it after the normalisation" in finding.message
    assert "the shift is removed here" in {loc.label for loc in finding.related}
    # an ETP op in place of the plain `+` would give b no gradient either: no ETL201
    assert not [f for f in findings if f.rule_id == "ETL201"]


def test_a_bias_before_a_layer_norm_or_per_head_before_a_softmax_is_reported():
    findings, _ = lint_shared(SHIFT_REMOVED_BIAS + "::etrace_target_layer_norm_scalar_bias")
    (finding,) = [f for f in findings if f.rule_id == "ETL225"]
    assert "a subtraction of its mean over axis 0 and its variance (a layer norm)" in finding.message
    findings, _ = lint_shared(SHIFT_REMOVED_BIAS + "::etrace_target_head_bias")
    (finding,) = [f for f in findings if f.rule_id == "ETL225"]
    assert finding.message.startswith("b (of shape (2, 1)) is added uniformly along axis 1 of a (2, 4) value")
    assert finding_properties(finding)["biasShape"] == [2, 1]


@pytest.mark.parametrize("factory", ["etrace_target_unit_bias", "etrace_target_head_bias_over_heads",
                                     "etrace_target_rms_norm_scalar_bias", "etrace_target_sum_subtracted",
                                     "etrace_target_bias_also_returned", "etrace_target_bias_also_scales"])
def test_a_bias_the_normaliser_sees_or_that_reaches_the_output_another_way_is_not_reported(factory):
    findings, _ = lint_shared(SHIFT_REMOVED_BIAS + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL225"], factory


SATURATED_GATE = os.path.join(FIXTURES, "own", "saturated_gate.py")


def test_a_saturated_gate_names_its_bias_the_weights_it_starves_and_the_fix():
    findings, _ = lint_shared(SATURATED_GATE + "::etrace_target_sigmoid_gate_bias_20")
    (finding,) = [f for f in findings if f.rule_id == "ETL226"]
    assert finding.message.startswith("`jax.nn.sigmoid` on this line starts saturated: at b_f's starting values its "
                                      "slope is below 1e-4 in all 4 units (2.1e-09 at 20), which float32 rounds to "
                                      "exactly 0")
    assert "the gradient of b_f and w_f, which feed the same sum" in finding.message
    assert "online and by BPTT alike" in finding.message and "a forget-gate bias of 1" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "b_f" and finding.subject.weights == ("w_f",)
    assert finding.line == line_of(SATURATED_GATE, "f = jax.nn.sigmoid(braintrace.matmul(x, self.w_f.value) + self.b_f")
    created = line_of(SATURATED_GATE, "self.b_f = brainstate.ParamState")
    assert any(loc.label == "bias created here" and loc.line == created for loc in finding.related)
    properties = finding_properties(finding)
    assert properties["saturatedUnitCount"] == properties["zeroSlopeUnitCount"] == properties["unitCount"] == 4
    # a slope, however small, is no verdict: ETL201's zero for the plain `+` stays beside it, and w_f's "learns online"
    assert {f.rule_id for f in findings if f.subject.weight == "b_f"} == {"ETL201", "ETL226"}
    assert any(f.rule_id == "ETL001" and f.subject.weight == "w_f" for f in findings)


def test_a_saturated_gate_counts_its_units_and_sums_its_biases():
    findings, _ = lint_shared(SATURATED_GATE + "::etrace_target_etp_bias_sigmoid_gate_one_unit_at_12")
    (finding,) = [f for f in findings if f.rule_id == "ETL226"]
    assert "below 1e-4 in 1 of its 4 units (6.1e-06 at 12), so" in finding.message  # float32 keeps this slope
    assert finding_properties(finding)["zeroSlopeUnitCount"] == 0
    findings, _ = lint_shared(SATURATED_GATE + "::etrace_target_two_biases_sigmoid_gate")
    (finding,) = [f for f in findings if f.rule_id == "ETL226"]
    assert "at the starting sum b_f + b_hh its slope" in finding.message
    assert finding.subject.weights == ("b_hh", "w_f")


@pytest.mark.parametrize("factory", ["etrace_target_sigmoid_gate_bias_1", "etrace_target_relu_gate_bias_20"])
def test_a_moderate_bias_or_a_relu_is_not_a_saturated_gate(factory):
    findings, _ = lint_shared(SATURATED_GATE + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL226"], factory


CLIPPED = os.path.join(FIXTURES, "own", "clipped_weight.py")


def test_a_clip_ceiling_names_the_weight_its_entries_above_it_what_braintrace_does_online_and_the_fix():
    findings, _ = lint_shared(CLIPPED + "::etrace_target_minimum_etp")
    (finding,) = [f for f in findings if f.rule_id == "ETL227"]
    assert finding.message.startswith("`jnp.minimum` on this line keeps w at or below 0.25, and its slope is 0 at 4 "
                                      "of the 16 entries of w, which start above 0.25: BPTT gives those entries no "
                                      "gradient")
    # braintrace.matmul reads w through the clip and leaves its slope out: online, the clipped entries move
    assert "its online gradient of w is not BPTT's" in finding.message
    assert "weight_fn=lambda v: 0.25 - jax.nn.softplus(0.25 - v)" in finding.message
    assert finding.level.value == "warning" and finding.subject.weight == "w"
    assert finding.line == line_of(CLIPPED, "w_c = jnp.minimum(self.w.value, 0.25)  # expect: ETL227")
    labels = {loc.label for loc in finding.related}
    assert "weight created here" in labels and "the ETP op that reads w through jnp.minimum" in labels
    properties = finding_properties(finding)
    assert properties["deadUnitCount"] == 4 and properties["unitCount"] == 16 and properties["readByEtpOp"]
    assert properties["constraint"] == "jnp.minimum" and properties["ceiling"] == 0.25
    # it claims no verdict of the whole weight (its entries below the ceiling learn exactly): "learns online" stays
    assert [f for f in findings if f.rule_id == "ETL001" and f.subject.weight == "w"]


def test_a_clip_with_both_bounds_gives_each_side_its_own_rule_and_a_plain_op_leaves_online_to_etl201():
    findings, _ = lint_shared(CLIPPED + "::etrace_target_clip_range_etp")
    (ceiling,) = [f for f in findings if f.rule_id == "ETL227"]
    (floor,) = [f for f in findings if f.rule_id == "ETL223"]
    assert "keeps w at or below 0.25, and its slope is 0 at 4 of the 16 entries" in ceiling.message
    assert "keeps w at or above -0.25, and its slope is 0 at 4 of the 16 entries" in floor.message
    assert finding_properties(ceiling)["constraint"] == "jnp.clip" and finding_properties(ceiling)["readByEtpOp"]
    # the ETP op reads the floor's output through the ceiling: both sides say what braintrace's online rule does
    assert finding_properties(floor)["readByEtpOp"] and "braintrace's compiler reads w through" in floor.message
    findings, _ = lint_shared(CLIPPED + "::etrace_target_minimum_plain")
    (finding,) = [f for f in findings if f.rule_id == "ETL227"]
    assert "braintrace's compiler reads" not in finding.message and not finding_properties(finding)["readByEtpOp"]
    assert [f for f in findings if f.rule_id == "ETL201" and f.subject.weight == "w"]


@pytest.mark.parametrize("factory", ["etrace_target_inside_ceiling", "etrace_target_minimum_weight_fn"])
def test_a_ceiling_above_or_at_every_starting_entry_or_as_a_weight_fn_is_not_etl227s(factory):
    # a ceiling above every entry, one exactly at the largest (JAX gives each side of a tie half the slope), and
    # the same jnp.minimum as braintrace.matmul's weight_fn, which ETL219 reports
    findings, _ = lint_shared(CLIPPED + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL227"], factory
