"""--verify: online gradients against BPTT, on models where the answer is known."""

from __future__ import annotations

import json
import math

import braintrace
import pytest
from helpers import fixture

import etrace_lint
from etrace_lint.config.settings import EngineSettings
from etrace_lint.core.findings import Level, TargetResult
from etrace_lint.core.learning_graph import learning_graph
from etrace_lint.core.verdict import Verdict
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.lint import lint_target
from etrace_lint.verify import verdict as judge
from etrace_lint.verify.settings import VerifySettingsError, resolve_settings
from etrace_lint.writers.properties import finding_properties
from etrace_lint.writers.verify_table import format_verify_table

REPO = fixture("..", "..")
VERIFY_RULES = ("ETL401", "ETL402", "ETL403", "ETL404", "ETL405", "ETL414", "ETL499")


def verified(name: str, **run_options) -> dict[str, TargetResult]:
    path = fixture("verify", name)
    found = discover([path], REPO)
    return {spec.factory: lint_target(spec, REPO, EngineSettings(verify=True, **run_options)) for spec in found.targets}


def verify_findings(result: TargetResult, rule_id: str | None = None) -> list:
    return [f for f in result.findings if f.rule_id in VERIFY_RULES and (rule_id is None or f.rule_id == rule_id)]


def marked_line(name: str, text: str) -> int:
    with open(fixture("verify", name), encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if text in line:
                return number
    raise AssertionError(text)


@pytest.fixture(scope="module")
def exact():
    return verified("exact.py")


@pytest.fixture(scope="module")
def approximate():
    return verified("approximate.py")


@pytest.fixture(scope="module")
def broken():
    return verified("broken.py")


@pytest.mark.parametrize("target", ["etrace_target_leaky", "etrace_target_lif", "etrace_target_elementwise_leak"])
def test_exact_models_verify_clean(exact, target):
    result = exact[target]
    assert not result.tool_errors
    assert verify_findings(result) == []
    rows = result.verify_rows
    assert {r["steps"] for r in rows} == {1, 16}
    # exact wherever BPTT moves the weight; where neither gradient moves it (the leak before the state
    # has any value, at one step) nothing was compared, and the row says so
    assert rows and all(r["expected"] == "exact" and (r["verdict"] == "exact" or
                                                      (r["verdict"] == "n/a" and r["bpttNorm"] == 0)) for r in rows)
    # a live check: BPTT moves every weight, so agreeing with it means something
    assert all(r["bpttNorm"] > 0 for r in rows if r["steps"] == 16)


def test_gru_reset_gate_does_not_learn_online(approximate):
    found = verify_findings(approximate["etrace_target_gru"], "ETL402")
    assert [(f.line, finding_properties(f)["weight"]) for f in found] == [
        (marked_line("approximate.py", "self.Wr ="), "Wr.weight")]
    assert found[0].level is Level.WARNING
    assert finding_properties(found[0])["explainedBy"] == "ETL005"
    assert any(loc.label.startswith("ETL005") for loc in found[0].related)


def test_gru_update_and_candidate_weights_are_approximations_not_errors(approximate):
    result = approximate["etrace_target_gru"]
    assert verify_findings(result, "ETL401") == []
    notes = {finding_properties(f)["weight"]: f for f in verify_findings(result, "ETL403")}
    assert set(notes) == {"Wz.weight", "Wh.weight"}
    for note in notes.values():
        assert note.level is Level.NOTE
        verify = finding_properties(note)["verify"]
        assert verify["algorithm"] == "d_rtrl" and verify["steps"] == 16
        assert verify["verdict"] == "approximation" and 0 < verify["relError"] and verify["cosine"] < 1


def test_weight_through_plain_matmul_does_not_learn_online(approximate):
    found = verify_findings(approximate["etrace_target_plain_input"], "ETL402")
    assert [(f.line, finding_properties(f)["weight"]) for f in found] == [
        (marked_line("approximate.py", "self.w_plain ="), "w_plain")]
    assert finding_properties(found[0])["explainedBy"] == "ETL201"


def test_every_weight_is_exact_at_one_step(exact, approximate):
    rows = [r for results in (exact, approximate) for res in results.values() for r in res.verify_rows
            if r["steps"] == 1 and r["weight"] != "w_plain"]
    from_rest = [r for r in rows if "warmupSteps" not in r]
    assert from_rest and all(r["expected"] == "exact" and r["verdict"] in ("exact", "n/a") for r in from_rest)
    assert all(r["relError"] is None for r in from_rest if r["verdict"] == "n/a")
    # a first step from rest that moves nothing is measured from the states two steps leave: the element-wise leak
    # is exact there; the GRU's reset gate, which multiplies h (zero at rest), gets nothing, as over the sequence
    moved = {(r["model"], r["weight"], r["verdict"], r["warmupSteps"]) for r in rows if "warmupSteps" in r}
    assert moved == {("etrace_target_elementwise_leak", "leak", "exact", 2),
                     ("etrace_target_gru", "Wr.weight", "not-learning", 2)}


def test_wrong_etp_rule_is_an_error_even_at_one_step(broken):
    result = broken["etrace_target_wrong_rule"]
    found = verify_findings(result)
    assert [(f.rule_id, f.line) for f in found] == [("ETL401", marked_line("broken.py", "self.w ="))]
    assert found[0].level is Level.ERROR
    verdicts = {r["steps"]: r["verdict"] for r in result.verify_rows}
    assert verdicts == {1: "wrong", 16: "wrong"}
    assert finding_properties(found[0])["verify"]["relError"] > 0.5


def test_a_multiple_of_bptt_is_named_as_such(broken):
    (found,) = verify_findings(broken["etrace_target_wrong_rule"])
    assert "online gradient is 2.00x BPTT's, same direction" in found.message
    assert finding_properties(found)["verify"]["scale"] == pytest.approx(2.0, rel=1e-3)


def test_lstm_input_and_candidate_gates_are_twice_bptt_at_one_step():
    # braintrace 0.2.6 and 0.2.8 alike: c is computed from these gates and h from c's new value in the
    # same step, and the path through c is counted for c and again for h
    result = verified("scaled.py")["etrace_target_lstm"]
    found = verify_findings(result, "ETL401")
    assert {finding_properties(f)["weight"].split(".")[0] for f in found} == {"Wi", "Wg"}
    for finding in found:
        assert finding.level is Level.ERROR
        assert finding.line == marked_line("scaled.py", "LSTMCell(")
        assert "online gradient is 2.00x BPTT's, same direction" in finding.message
        assert "counts one path from the weight to the loss twice" in finding.message
        assert "relative error" not in finding.message
    assert "wrong(2.00x)" in format_verify_table(result.verify_rows)


def test_a_partial_path_is_an_approximation_even_at_one_step():
    result = verified("partial.py")["etrace_target_minimal_rnn"]
    assert verify_findings(result, "ETL401") == []
    phi = [r for r in result.verify_rows if r["weight"].startswith("phi")]
    assert phi and all(r["expected"] == "approximation" and r["steps"] == 1 for r in phi)
    assert all(r["relError"] > 0.01 for r in phi)  # it does miss a part: the label is not vacuous
    assert "another weight's op" in phi[0]["reason"]
    others = [r for r in result.verify_rows if not r["weight"].startswith("phi")]
    assert others and all(r["verdict"] == "exact" for r in others)


def test_harness_mismatch_is_reported_not_compared(broken):
    result = broken["etrace_target_counting"]
    assert {f.rule_id for f in verify_findings(result)} == {"ETL499"}
    assert result.verify_rows == []


def test_rows_are_json_and_carry_the_device(approximate):
    result = approximate["etrace_target_gru"]
    again = TargetResult.from_json(json.loads(json.dumps(result.to_json(), allow_nan=False)))
    assert again.verify_rows == result.verify_rows
    import jax

    backend = jax.default_backend()  # the default device: the GPU when there is one
    assert result.verify_rows and all(r["device"].startswith(backend) for r in result.verify_rows)
    for finding in verify_findings(result):
        assert finding_properties(finding)["verify"]["device"].startswith(backend)


def test_table_shows_each_weight_leaf_with_its_verdict(approximate):
    table = format_verify_table(approximate["etrace_target_gru"].verify_rows)
    assert "Gradient check of etrace_target_gru" in table
    lines = {line.split()[0]: line.split() for line in table.splitlines() if line.startswith("  W")}
    assert lines["Wr.weight['weight']"][3] == "not-learning"
    assert lines["Wz.weight['weight']"][3] == "approximation"
    # the magnitude of BPTT's gradient beside the verdicts: where a vanishing or exploding gradient shows
    shown = lines["Wz.weight['weight']"]
    row = next(r for r in approximate["etrace_target_gru"].verify_rows
               if r["weight"] + r["leaf"] == "Wz.weight['weight']" and r["steps"] == int(shown[1]))
    assert float(shown[2]) == pytest.approx(row["bpttNorm"], rel=1e-2)


def test_unknown_device_is_reported_as_not_run():
    results = verified("exact.py::etrace_target_leaky", device="no-such-platform")
    found = verify_findings(results["etrace_target_leaky"])
    assert [f.rule_id for f in found] == ["ETL405"]
    assert "no-such-platform" in found[0].message


def test_settings_layer_target_then_the_runs_settings():
    settings = resolve_settings({"steps": 8, "batch": 3, "algorithms": ["pp_prop"], "tolerances": 1e-3},
                                EngineSettings(verify_steps=5, verify_cosine_floor=0.2))
    assert (settings.steps, settings.batch, settings.algorithms, settings.cosine_floor) == (5, 3, ("pp_prop",), 0.2)
    assert settings.tolerance("float32") == 1e-3
    defaults = resolve_settings({}, EngineSettings())
    # no batch: the target's own batch, or 4 for a model given unbatched
    assert (defaults.steps, defaults.batch, defaults.seed, defaults.algorithms) == (16, None, 0, ("d_rtrl", "pp_prop"))
    assert defaults.tolerance("float32") == 1e-5 and defaults.tolerance("float64") == 1e-10
    with pytest.raises(VerifySettingsError, match="steps"):
        resolve_settings({"steps": 0})
    with pytest.raises(VerifySettingsError, match="unknown verify option"):
        resolve_settings({"stepz": 3})


@pytest.fixture(scope="module")
def batched():
    return verified("batched.py", verify_algorithms=["d_rtrl"])


@pytest.mark.parametrize("target, batch", [("etrace_target_batched_init", 3), ("etrace_target_only_batched", 2),
                                           ("etrace_target_only_unbatched", None)])
def test_batched_models_are_checked_as_they_were_given(batched, target, batch):
    result = batched[target]
    assert not result.tool_errors
    assert verify_findings(result) == []
    rows = result.verify_rows
    assert rows and {r["batch"] for r in rows} == {batch}
    assert all(r["verdict"] == "exact" for r in rows)
    assert all(r["bpttNorm"] > 0 for r in rows if r["steps"] == 16)


def test_a_step_written_for_one_sample_falls_back_to_unbatched(batched):
    result = batched["etrace_target_written_unbatched"]
    assert [f.rule_id for f in verify_findings(result) if f.rule_id in ("ETL401", "ETL405", "ETL499")] == []
    assert {r["batch"] for r in result.verify_rows} == {None}
    assert all(r["verdict"] == "exact" for r in result.verify_rows if r["steps"] == 1)


def test_an_explicit_verify_batch_rebatches_only_a_model_that_initialises_both_ways():
    both = verified("batched.py::etrace_target_batched_init", verify_algorithms=["d_rtrl"], verify_batch=2)
    assert {r["batch"] for r in both["etrace_target_batched_init"].verify_rows} == {2}
    one = verified("batched.py::etrace_target_only_unbatched", verify_algorithms=["d_rtrl"], verify_batch=2)
    assert {r["batch"] for r in one["etrace_target_only_unbatched"].verify_rows} == {None}


def test_a_model_no_layout_runs_is_told_what_to_set(batched):
    (found,) = verify_findings(batched["etrace_target_wrong_batch_size"])
    assert (found.rule_id, found.level) == ("ETL405", Level.WARNING)
    assert found.line == marked_line("batched.py", "def etrace_target_wrong_batch_size")
    message = found.message
    assert "batched (batch 5), as the target gave it: one step on inputs of shape (5, 4, 3) turns hidden " \
           "state h of shape (4, 6) into (5, 4, 6)" in message
    assert "unbatched: one step on inputs of shape (4, 3) turns hidden state h of shape (6,) into (4, 6)" in message
    assert "`@etrace_lint.target(batch_size=4)`" in message and 'verify={"batch": N}' in message
    assert "scan body" not in message and "<class" not in message and "\\n" not in message


def test_verdicts_tell_a_bug_from_an_approximation():
    same = judge.metrics([1.0, 2.0], [1.0, 2.0])
    double = judge.metrics([2.0, 4.0], [1.0, 2.0])
    zero = judge.metrics([0.0, 0.0], [1.0, 2.0])
    opposite = judge.metrics([-1.0, -2.0], [1.0, 2.0])
    assert judge.decide(same, True, 1e-5, 0.5, 0.0) == Verdict.EXACT
    assert judge.decide(double, True, 1e-5, 0.5, 0.0) == Verdict.WRONG
    assert judge.decide(double, False, 1e-5, 0.5, 0.0) == Verdict.APPROXIMATION
    # against BPTT on one draw: claimed only when every draw says so
    assert judge.decide(opposite, False, 1e-5, 0.5, 0.0) == Verdict.AGAINST
    assert judge.decide(opposite, True, 1e-5, 0.5, 0.0) == Verdict.WRONG  # where exact is expected: a bug
    assert judge.confirmed(Verdict.AGAINST, [-1.0, -0.9, -0.2], False) == Verdict.AGAINST
    assert judge.confirmed(Verdict.AGAINST, [-1.0, 0.1, -0.2], False) == Verdict.MISALIGNED
    assert judge.confirmed(Verdict.AGAINST, [-1.0, 0.1, -0.2], True) == Verdict.WRONG
    assert judge.confirmed(Verdict.AGAINST, [-1.0, math.nan, -0.2], False) == Verdict.MISALIGNED
    assert judge.decide(judge.metrics([1.0, 0.3], [0.2, 1.0]), False, 1e-5, 0.5, 0.0) == Verdict.MISALIGNED
    assert judge.decide(zero, True, 1e-5, 0.5, 0.0) == Verdict.NOT_LEARNING
    assert judge.decide(judge.metrics([math.nan], [1.0]), False, 1e-5, 0.5, 0.0) == Verdict.NONFINITE
    assert math.isclose(double.rel_error, 1.0) and math.isclose(double.cosine, 1.0)


def test_the_advice_decides_without_an_expectation_and_words_verdicts_its_own_way():
    same = judge.metrics([1.0, 2.0], [1.0, 2.0])
    double = judge.metrics([2.0, 4.0], [1.0, 2.0])
    # the advice does not know which gradients must be exact: within tolerance is exact, else the direction judges
    assert judge.decide(same, None, 1e-5, 0.5, 0.0) is Verdict.EXACT
    assert judge.decide(double, None, 1e-5, 0.5, 0.0) is Verdict.APPROXIMATION
    assert judge.decide(judge.metrics([0.0, 0.0], [1.0, 2.0]), None, 1e-5, 0.5, 0.0) is Verdict.NOT_LEARNING
    assert judge.decide(judge.metrics([1.0, 2.0], [1e-9, 0.0]), None, 1e-5, 0.5, 1e-8) is Verdict.MISALIGNED
    assert judge.decide(judge.metrics([0.0], [0.0]), None, 1e-5, 0.5, 0.0) is Verdict.VACUOUS
    # an online gradient that is zero on a draw that drives the weight is not against BPTT there
    assert judge.confirmed(Verdict.AGAINST, [-1.0, math.nan, -0.2], None) is Verdict.MISALIGNED
    # a draw whose BPTT gradient is zero drives nothing: the two that do decide
    assert judge.confirmed(Verdict.AGAINST, [-1.0, None, -0.2], None) is Verdict.AGAINST
    words = {verdict: verdict.advice_text for verdict in Verdict}
    assert words[Verdict.NOT_LEARNING] == "no online gradient" and words[Verdict.AGAINST] == "learns against BPTT"
    assert words[Verdict.APPROXIMATION] == "approximate" and words[Verdict.NONFINITE] == "not finite"
    assert all(Verdict.from_advice_text(word) is verdict for verdict, word in words.items())


def test_a_multiple_of_bptt_is_told_from_an_error():
    tolerance = 1e-5
    assert judge.scale(judge.metrics([2.0, 4.0], [1.0, 2.0]), tolerance) == pytest.approx(2.0)
    assert judge.scale(judge.metrics([-0.5, -1.0], [1.0, 2.0]), tolerance) == pytest.approx(-0.5)
    assert judge.scale(judge.metrics([1.0, 2.0], [1.0, 2.0]), tolerance) is None
    assert judge.scale(judge.metrics([2.0, 1.0], [1.0, 2.0]), tolerance) is None  # another direction
    assert judge.scale(judge.metrics([0.0, 0.0], [1.0, 2.0]), tolerance) is None
    assert judge.describe_scale(2.0) == "2.00x BPTT's, same direction"
    assert judge.describe_scale(-1.0) == "1.00x BPTT's, opposite direction"
    assert judge.describe_scale(0.004) == "0.004x BPTT's, same direction"


def test_the_table_and_every_finding_name_a_weight_alike(exact):
    result = exact["etrace_target_in_sequential"]
    assert not result.tool_errors and verify_findings(result) == []
    assert {r["weight"] for r in result.verify_rows} == {"layers[0].fc.weight"}
    assert {tuple(r["weightPath"]) for r in result.verify_rows} == {("layers", 0, "fc", "weight")}
    (included,) = [f for f in result.findings if f.rule_id == "ETL001"]
    assert finding_properties(included)["weight"] == "layers[0].fc.weight" and "layers[0].fc.weight" in included.message
    assert "layers[0].fc.weight['weight']" in format_verify_table(result.verify_rows)


@pytest.fixture(scope="module")
def layouts():
    return verified("layouts.py", verify_algorithms=["d_rtrl"])


@pytest.mark.parametrize("target, batch", [("etrace_target_map", 4), ("etrace_target_step_index", 2),
                                           ("etrace_target_init_without_batch", None),
                                           ("etrace_target_batched_by_decorator", 5)])
def test_verify_runs_on_the_layouts_training_loops_run_on(layouts, target, batch):
    # a brainstate.nn.Map keeps the states its map made, a step index gets no batch axis, and the
    # learner is built on the states as they are (braintrace.compile would initialise them again)
    result = layouts[target]
    assert not result.tool_errors
    assert verify_findings(result) == [], [f.message for f in verify_findings(result)]
    rows = result.verify_rows
    assert rows and {r["batch"] for r in rows} == {batch}
    assert all(r["verdict"] == "exact" for r in rows)
    assert all(r["bpttNorm"] > 0 for r in rows if r["steps"] == 16)


@pytest.fixture(scope="module")
def vacuous():
    return verified("vacuous.py")


def test_inputs_are_scaled_until_bptt_moves_every_weight(vacuous):
    result = vacuous["etrace_target_needs_stronger_inputs"]
    assert verify_findings(result) == []
    rows = result.verify_rows
    assert rows and all(r["inputScale"] > 1 and r["bpttNorm"] > 0 and r["verdict"] == "exact" for r in rows)


def test_a_check_that_compared_nothing_prints_no_number(vacuous):
    result = vacuous["etrace_target_integer_output"]
    (found,) = verify_findings(result)
    assert found.rule_id == "ETL405" and "could not compare anything" in found.message
    assert "scaled up to 64 times" in found.message
    assert all(r["verdict"] == "n/a" and r["relError"] is None and r["cosine"] is None for r in result.verify_rows)
    table = format_verify_table(result.verify_rows)
    assert "n/a" in table and "exact" not in table and "0.000" not in table
    # neither gradient moves a weight of a model whose output is an integer
    assert "n/a(online 0)" in table
    assert not [f for f in result.findings if f.rule_id == "ETL403"]  # no "relative error 0" note


def test_exception_texts_are_whole_sentences():
    from etrace_lint.verify.harness import describe

    class BrainStateError(Exception):
        pass

    text = describe(BrainStateError("The module \nMapped(n=6) has no state named h. Call init_all_states first."))
    assert text == "BrainStateError: The module Mapped(n=6) has no state named h."
    long = describe(ValueError("word " * 200))
    assert long.endswith(" ...") and "wor ..." not in long and len(long) < 420


@pytest.fixture(scope="module")
def against():
    return verified("against.py")


def test_a_weight_that_learns_against_bptt_on_every_draw_is_its_own_verdict(against):
    found = verify_findings(against["etrace_target_delayed_inhibition"])
    assert [(f.rule_id, f.line) for f in found] == [("ETL414", marked_line("against.py", "expect: ETL414"))]
    finding = found[0]
    assert finding.level is Level.WARNING and "learns against BPTT under d_rtrl" in finding.message
    # 3 draws from rest, and one from the states 2 steps of the first leave
    assert "on 4 input draws (the last from states moved from rest)" in finding.message
    assert "misaligned" not in finding.message
    worst = finding_properties(finding)["verify"]
    assert worst["verdict"] == "against-bptt" and worst["cosine"] < -0.9
    # the same inhibition read element-wise joins v's group: D-RTRL follows it and is exact
    assert verify_findings(against["etrace_target_elementwise_inhibition"]) == []


def test_a_leaf_against_bptt_in_a_weight_that_as_a_whole_is_not_is_poorly_aligned_not_against(against):
    # the bias points against BPTT on every draw; the whole parameter, its 32-input weight beside it, does not
    result = against["etrace_target_wide_delayed_inhibition"]
    found = verify_findings(result)
    assert [(f.rule_id, f.line) for f in found] == [("ETL404", marked_line("against.py", "expect: ETL414, ETL404"))]
    assert "w.weight (2 leaves; worst ['bias'])" in found[0].message
    (bias,) = [row for row in result.verify_rows if row["leaf"] == "['bias']" and row["steps"] == 4]
    assert bias["verdict"] == "misaligned" and len(bias["draws"]) == judge.DRAWS + 1 and max(bias["draws"]) < 0


def test_a_direction_is_claimed_only_after_every_draw_agrees(against):
    rows = [row for result in against.values() for row in result.verify_rows]
    against_bptt = [row for row in rows if row["verdict"] == "against-bptt"]
    assert against_bptt and all(len(row["draws"]) == judge.DRAWS + 1 and max(row["draws"]) < 0 for row in against_bptt)
    # a row measured on further draws and not claimed against BPTT is one the draws or the weight as a whole
    # outvoted (the wide layer's leaves): misaligned, never exact or approximate with draws beside it
    drawn = [row for row in rows if "draws" in row and row["verdict"] != "against-bptt"]
    assert drawn and all(row["verdict"] == "misaligned" for row in drawn)


def test_a_direction_the_first_draws_show_is_searched_until_a_further_draw_refutes_it(against):
    result = against["etrace_target_delayed_inhibition_pp_prop"]
    rows = {row["leaf"]: row for row in result.verify_rows if row["steps"] > 1}
    # the input weight points against BPTT's on the 4 draws every direction is read on, and not on a later one
    weight = rows["['weight']"]
    assert max(weight["draws"]) < 0 and weight["moreDraws"][-1] >= 0 and weight["verdict"] == "misaligned"
    # the bias stays against BPTT's on every draw searched: 3 more, each from rest and from moved states
    bias = rows["['bias']"]
    assert bias["verdict"] == "against-bptt" and len(bias["moreDraws"]) == 6 and max(bias["moreDraws"]) < 0
    (found,) = verify_findings(result, "ETL414")
    assert "w.weight['bias'] learns against BPTT under pp_prop" in found.message
    assert "then -1.00" in found.message and "on 6 more input draws, from rest and from the states" in found.message
    # the input weight, refuted, is what an approximation below the floor is
    (misaligned,) = verify_findings(result, "ETL404")
    assert "w.weight['weight'] is poorly aligned" in misaligned.message


def test_a_weight_the_graph_excludes_that_learns_all_the_same_gets_the_default_runs_verdict():
    # --verify measures what the probe would, but what the probe folds into the graph's exclusion of a use (the
    # weight learns partly) it keeps: without it, ETL005's "will not learn online" made the weight "does not learn"
    path = fixture("verify", "excluded_but_learns.py")
    (verified_run,) = verified("excluded_but_learns.py").values()
    default = etrace_lint.check_target(path).weights()["etrace_target_excluded_factor"]
    weights = learning_graph("t", verified_run.findings).weights()
    assert weights["l0_wa"] is WeightVerdict.PARTLY and default["l0_wa"] == WeightVerdict.PARTLY.value
    excluded = [f for f in verified_run.findings if f.rule_id == "ETL005" and f.subject.weight == "l0_wa"]
    assert excluded and all([m.rule for m in f.measured] == ["ETL418"] and "it learns partly" in f.message
                            for f in excluded)
    # --verify's own rows of it stand beside the exclusion: its online gradient measured, not zero
    assert [row for row in verified_run.verify_rows if row["weight"] == "l0_wa" and row["onlineNorm"]]


def test_an_online_step_that_raises_is_the_models_error_under_verify_as_by_default():
    # BPTT runs; braintrace's online step raises (its vmap of one layer): --verify cannot compare, and every weight's
    # verdict is what the default run says, "step raises", with the probe's error, not the graph's "learns"
    path = fixture("fuzz", "fuzz_step_raises_for_every_weight.py")
    default = etrace_lint.check_target(path)
    result = etrace_lint.check_target(path, verify=True)
    assert result.weights() == default.weights()
    assert set(next(iter(result.weights().values())).values()) == {WeightVerdict.STEP_RAISES.value}
    assert [f.rule_id for f in result.errors] == ["ETL410"]
    # and --verify says it compared nothing for the algorithm, with braintrace's exception
    (not_run,) = [f for f in result.warnings if f.rule_id == "ETL405"]
    assert not_run.message.startswith("--verify did not run eprop over 16 steps: ValueError: vmap")


def test_a_first_step_from_rest_that_drives_nothing_is_measured_from_moved_states():
    # the spiking layers are silent through the first step from rest, so that step compares nothing; from the states
    # two steps leave it must still be BPTT's, and it is not: the weight learns approximately, as by default
    path = fixture("verify", "silent_first_step.py")
    result = etrace_lint.check_target(path, verify=True)
    (first,) = [row for row in result.verify_rows if row["weight"] == "l2_sp.weight" and row["steps"] == 1]
    assert first["verdict"] == "wrong" and first["warmupSteps"] == 2 and 0.3 < first["cosine"] < 0.95
    (wrong,) = [f for f in verify_findings(result, "ETL401") if f.subject.weight == "l2_sp.weight"]
    assert "over 1 step from the states 2 steps of its inputs leave" in wrong.message
    verdict = result.weights()["etrace_target_silent_first_step"]["l2_sp.weight"]
    assert verdict == WeightVerdict.APPROXIMATE.value
    assert etrace_lint.check_target(path).weights()["etrace_target_silent_first_step"]["l2_sp.weight"] == verdict


def test_a_zero_over_the_sequence_that_a_shorter_one_refutes_is_not_claimed():
    # over 16 steps the bias's BPTT gradient grows to 3e4 and the online one stays near 6e-5: a zero beside it on
    # every draw; over 4 steps the online gradient is 0.1x BPTT's, so the weight learns, and no ETL402 says otherwise
    path = fixture("verify", "zero_over_long_sequences.py")
    result = etrace_lint.check_target(path, verify=True)
    (bias,) = [row for row in result.verify_rows
               if row["weight"] == "l1_norm.param" and row["leaf"] == "['bias']" and row["steps"] == 16]
    assert bias["verdict"] == "n/a" and bias["bpttNorm"] > 1e3 * bias["onlineNorm"] > 0
    assert not [f for f in verify_findings(result, "ETL402") if f.subject.weight == "l1_norm.param"]
    default = etrace_lint.check_target(path).weights()["etrace_target_zero_over_long_sequences"]["l1_norm.param"]
    assert result.weights()["etrace_target_zero_over_long_sequences"]["l1_norm.param"] == default
    assert default == WeightVerdict.WITHIN_WINDOW.value


def test_a_direction_against_bptt_on_one_initialisation_only_is_not_claimed():
    # against BPTT's on every input draw of the factory's first initialisation (cosine -0.94); the readout's random
    # weights drawn on another seed turn it BPTT's way: misaligned under --verify, and not ETL415 by default either
    path = fixture("verify", "against_on_one_initialisation.py")
    target = "etrace_target_against_on_one_initialisation"
    result = etrace_lint.check_target(path, verify=True)
    (row,) = [r for r in result.verify_rows if r["weight"] == "l0_wa" and r["steps"] == 16]
    assert row["verdict"] == "misaligned" and all(c < 0 for c in row["draws"])
    # the six further draws of the same weights point against BPTT's too; a draw of other weights does not
    assert all(c < 0 for c in row["moreDraws"][:6]) and row["moreDraws"][-1] > 0
    assert not verify_findings(result, "ETL414")
    default = etrace_lint.check_target(path)
    assert "ETL415" not in {f.rule_id for f in default.findings}
    assert result.weights()[target]["l0_wa"] == default.weights()[target]["l0_wa"] == WeightVerdict.APPROXIMATE.value


def test_the_input_scale_kept_drives_the_weights_over_the_whole_sequence_not_only_their_first_steps():
    # x16 drives more first steps and saturates the spike's surrogate, leaving the leak round-off over the sequence;
    # x1 drives every weight over the sequence, and there the leak's online gradient is what braintrace gives it
    path = fixture("verify", "saturated_at_larger_inputs.py")
    target = "etrace_target_saturated_at_larger_inputs"
    result = etrace_lint.check_target(path, verify=True)
    (row,) = [r for r in result.verify_rows if r["weight"] == "l0_tau" and r["steps"] == 16]
    assert row["inputScale"] == 1.0 and row["bpttNorm"] > 1.0
    if braintrace.__version__.startswith("0.2.6"):  # its online gradient is exactly zero there
        assert row["verdict"] == "not-learning" and row["onlineNorm"] == 0
        expected = WeightVerdict.ZERO.value
    else:
        assert row["verdict"] == "approximation" and row["onlineNorm"] > 0
        expected = WeightVerdict.LEARNS.value
    default = etrace_lint.check_target(path)
    assert result.weights()[target]["l0_tau"] == default.weights()[target]["l0_tau"] == expected


def test_a_weight_held_in_a_list_is_measured_on_every_draw_under_its_own_name():
    """A path with an index in it (``layers[0]``) is found again on the other input draws: the check that
    a direction holds on every draw once raised KeyError for such a weight."""
    import importlib.util

    import brainstate
    import jax.numpy as jnp

    import etrace_lint

    spec = importlib.util.spec_from_file_location("against_fixture", fixture("verify", "against.py"))
    against = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(against)

    class Listed(against.DelayedInhibition):
        def __init__(self):
            super().__init__()
            self.layers = [self.w]
            del self.w

        def update(self, x):
            self.late.value = self.v.value @ self.mix
            self.v.value = self.decay * self.v.value + self.layers[0](x)
            return self.v.value + self.late.value

    with brainstate.random.seed_context(0):
        model = Listed()
    brainstate.nn.init_all_states(model)
    result = etrace_lint.check(model, jnp.ones((3,)), verify=True)
    against_bptt = [f for f in result.warnings if f.rule_id == "ETL414"]
    assert against_bptt and all(f.message.startswith("layers[0].weight") for f in against_bptt), result
    rows = [row for row in result.verify_rows if row["verdict"] == "against-bptt"]
    assert rows and all(row["weight"] == "layers[0].weight" and len(row["draws"]) == judge.DRAWS + 1 for row in rows)


@pytest.mark.filterwarnings("ignore:ETP primitive:UserWarning")  # braintrace's note on the GRU's reset weight
@pytest.mark.parametrize("name", ["pp_prop", "es_d_rtrl", "esd_rtrl"])
def test_every_name_of_pp_prop_builds_with_the_default_options(name):
    """braintrace's pp_prop takes no default ``decay_or_rank``: a target that lists it by any of its names
    gets a learner, not a build error about an option it never set."""
    import brainstate
    import braintrace
    import jax.numpy as jnp

    options = resolve_settings({"algorithms": [name]}).options_for(name)
    cell = braintrace.nn.GRUCell(3, 4)
    brainstate.nn.init_all_states(cell)
    learner = braintrace.compile(cell, name, jnp.ones((3,)), **options)
    assert isinstance(learner, braintrace.pp_prop)


def test_a_model_whose_own_gradient_is_not_finite_blames_no_online_rule():
    # h += drive / g with g starting at zero: BPTT's gradient is NaN as well as the online one, so nothing is
    # compared: no ETL401 saying the compiler is wrong, one ETL405 naming the weights and the likely cause
    path = fixture("own", "zero_hidden_divisor.py")
    [spec] = [s for s in discover([path], REPO).targets if s.factory == "etrace_target_zero_normaliser"]
    result = lint_target(spec, REPO, EngineSettings(verify=True))
    rules = {f.rule_id for f in verify_findings(result)}
    assert "ETL401" not in rules
    [not_run] = verify_findings(result, "ETL405")
    assert "BPTT's own gradient" in not_run.message and "NaN or infinite" in not_run.message
    assert "w" in not_run.message.split(":")[0]
    assert result.verify_rows and all(r["verdict"] == "n/a" for r in result.verify_rows)
    # a model whose divisor starts at one compares as before
    [ones] = [s for s in discover([path], REPO).targets if s.factory == "etrace_target_ones_normaliser"]
    compared = lint_target(ones, REPO, EngineSettings(verify=True))
    assert not verify_findings(compared, "ETL405")
    assert any(r["verdict"] == "exact" for r in compared.verify_rows)


def test_a_direction_is_claimed_from_the_draws_that_drive_the_weight():
    # the first draw, two more from rest, then the warmed one; None: a draw on which BPTT's gradient is zero
    assert judge.against_on_every_draw([-0.6, -0.5, -0.7, -0.6])
    assert judge.against_on_every_draw([-0.6, None, None, -0.6])  # a ReLU the two rest draws keep shut
    assert not judge.against_on_every_draw([-0.6, None, None, None])  # the moved states do not drive it
    assert not judge.against_on_every_draw([-0.6, -0.5, -0.7, None])
    assert not judge.against_on_every_draw([-0.6, None, None])  # one draw alone
    assert not judge.against_on_every_draw([-0.6, math.nan, -0.7, -0.6])  # online zero where BPTT's is not
    assert not judge.against_on_every_draw([-0.6, 0.2, -0.7, -0.6])
    described = judge.describe_draws([-0.61, None, None, -0.61])
    assert described.startswith("-0.61, n/a, n/a and -0.61 on 4 input draws")
    assert "moved from rest" in described and "n/a:" in described


def test_an_online_gradient_where_bptt_has_none_is_named_with_its_norm():
    # a weight read through stop_gradient as an ETP op's weight operand: BPTT gives it exactly nothing, braintrace's
    # online rule moves it; --verify says so once per algorithm, and not that it could compare nothing
    path = fixture("probe", "online_without_bptt.py")
    [spec] = [s for s in discover([path], REPO).targets if s.factory == "etrace_target_stopped_operand"]
    result = lint_target(spec, REPO, EngineSettings(verify=True))
    assert not verify_findings(result, "ETL405")
    found = verify_findings(result)
    assert found and all("BPTT gradient is exactly zero" in f.message and "not zero (norm" in f.message
                         for f in found)
    assert {f.subject.algorithm for f in found} == {"d_rtrl", "pp_prop"}
    # the table's row for it gives the norm the online gradient moves it by, where BPTT's compares nothing
    moved = [r for r in result.verify_rows if r["bpttNorm"] == 0 and r["onlineNorm"]]
    assert moved, result.verify_rows
    assert f"{moved[0]['verdict']}(online {moved[0]['onlineNorm']:.3g})" in format_verify_table(result.verify_rows)


def test_a_weight_a_rule_proves_gets_no_gradient_is_not_judged_on_its_round_off():
    # a scalar bias before a LayerNorm (ETL225): its BPTT gradient is float32 round-off that the norm's 1/sigma
    # lifts above the run's zero scale (exactly 0 in float64); --verify compares nothing there
    path = fixture("own", "shift_removed_bias.py")
    [spec] = [s for s in discover([path], REPO).targets if s.factory == "etrace_target_layer_norm_scalar_bias"]
    result = lint_target(spec, REPO, EngineSettings(verify=True))
    rows = [r for r in result.verify_rows if r["weight"] == "b"]
    assert rows and all(r["verdict"] == "n/a" and r["cosine"] is None for r in rows), rows
    assert not [f for f in verify_findings(result) if f.subject.weight == "b"]
    assert [f.rule_id for f in result.findings if f.subject.weight == "b" and f.level.value != "note"] == ["ETL225"]


def test_where_verify_compares_nothing_the_probes_measurements_stand(monkeypatch):
    # seed 103's model 40 (a batch norm over a batch of 2, compiled without XLA's optimisations): --verify's online
    # and BPTT runs computed different forward losses over 1 and 16 steps (ETL499) and it compared no gradient, so
    # the weight kept the graph's "learns"; the probe's runs over 1 and 4 steps agree, and measure its first step
    # at 2.6x BPTT's. Here every --verify length's forwards differ, as there
    from etrace_lint.verify import check

    path = fixture("probe", "deviates.py")
    default = etrace_lint.check_target(path)
    monkeypatch.setattr(check, "same_forward", lambda online, reference, settings: False)
    compared_nothing = etrace_lint.check_target(path, verify=True)
    assert {f.rule_id for f in compared_nothing.findings} >= {"ETL499", "ETL416"}
    assert not compared_nothing.verify_rows
    assert compared_nothing.weights() == default.weights()
    assert WeightVerdict.APPROXIMATE.value in next(iter(default.weights().values())).values()
