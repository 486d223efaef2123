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
                                     "etrace_target_straight_through", "etrace_target_stopped_etp_operand"])
def test_a_weight_that_still_gets_a_gradient_is_not_under_stop_gradient(factory):
    # a use outside the stop, a stop on a hidden state, the straight-through form; and an ETP op whose weight
    # operand is stopped, which braintrace's online rule still trains (its online gradient is not zero)
    findings, _ = lint_shared(STOPPED_WEIGHT + "::" + factory)
    assert not [f for f in findings if f.rule_id == "ETL220"], factory
