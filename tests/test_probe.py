"""The learning-signal probe: measured online gradients decide each weight's verdict."""

from __future__ import annotations

import json
import re
import shutil

import braintrace
import helpers
import pytest
from helpers import assert_fixture, expected_markers, fixture, shared_results
from in_process import run_cli

import etrace_lint
from etrace_lint.config.settings import EngineSettings
from etrace_lint.core.findings import Finding, Level, Location, Subject
from etrace_lint.core.learning_graph import learning_graph
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.discovery.discover import discover
from etrace_lint.engine.lint import lint_target
from etrace_lint.writers.properties import finding_properties

REPO = fixture("..", "..")
PROBE_RULES = ("ETL410", "ETL411", "ETL412", "ETL413", "ETL415", "ETL416", "ETL417", "ETL418", "ETL419", "ETL420",
               "ETL421", "ETL422", "ETL423", "ETL424")
OLD_LINE = braintrace.__version__.startswith("0.2.6")


def probed(path: str) -> dict:
    """Each target's probed result; one lint per target for the session, shared with the marker tests."""
    return shared_results(path, probe=True)


def by_rule(result, *rules: str) -> list:
    return [f for f in result.findings if f.rule_id in rules]


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as handle:
        return next(n for n, line in enumerate(handle, start=1) if text in line)


def weight_rules(result, weight: str) -> set[str]:
    return {f.rule_id for f in result.findings if finding_properties(f).get("weight") == weight}


def marked(name: str, rule: str) -> int:
    (line,) = [line for line, rule_id in expected_markers(fixture("probe", name)) if rule_id == rule]
    return line


@pytest.fixture(scope="module")
def conv():
    return probed(fixture("probe", "conv_bias.py"))


def test_a_conv_bias_that_breaks_the_first_online_step_is_reported_on_its_line(conv):
    result = conv["etrace_target_conv_bias"]
    # the graph shows it (ETL210); the probe's measurement of the raising step is folded into that finding
    assert by_rule(result, *PROBE_RULES) == []
    (found,) = by_rule(result, "ETL210")
    assert (found.level, found.line) == (Level.ERROR, marked("conv_bias.py", "ETL210"))
    (measured,) = finding_properties(found)["measured"]
    assert measured["rule"] == "ETL410"
    assert "conv.weight['bias'] has shape (1, 1, 4)" in measured["message"]
    assert "has shape (4,)" in measured["message"]
    assert "first online training step under d_rtrl raises" in measured["message"]
    assert "Custom VJP" not in measured["message"] and "output[1]" not in measured["message"]  # the modeller's words
    assert measured["probe"]["parameterShape"] == [1, 1, 4]
    # one verdict: the compiler's "learns online" is not shown beside a step that raises
    assert weight_rules(result, "conv.weight") == {"ETL210"}
    assert finding_properties(found)["staticEvidence"][0]["rule"] == "ETL001"


def test_the_advised_bias_shape_trains(conv):
    result = conv["etrace_target_conv_channel_bias"]
    assert by_rule(result, *PROBE_RULES) == []
    assert weight_rules(result, "conv.weight") == {"ETL001"}


@pytest.fixture(scope="module")
def zero():
    return probed(fixture("probe", "zero.py"))


def test_a_measured_zero_gradient_confirms_the_static_verdict(zero):
    # the graph already shows the zero (ETL207, a mean-subtracted op output): the measured zero is folded
    # into that finding, so the weight keeps one verdict, with the static rule's advice
    result = zero["etrace_target_centered"]
    assert by_rule(result, *PROBE_RULES) == []
    (found,) = by_rule(result, "ETL207")
    assert (found.level, found.line) == (Level.WARNING, marked("zero.py", "ETL207"))
    (measured,) = finding_properties(found)["measured"]
    assert measured["rule"] == "ETL411"
    assert measured["message"].startswith("fc.weight does not learn online under d_rtrl: measured over 4 steps")
    assert measured["probe"]["wholeWeight"] is True
    assert all(leaf["onlineNorm"] == 0 and leaf["bpttNorm"] > 0 for leaf in measured["probe"]["leaves"])
    assert weight_rules(result, "fc.weight") == {"ETL207"}  # no ETL001 "learns online" beside it


def test_a_weight_that_learns_keeps_its_relation_and_gets_no_probe_finding(zero):
    result = zero["etrace_target_leaky"]
    assert by_rule(result, *PROBE_RULES) == []
    assert weight_rules(result, "fc.weight") == {"ETL001"}


def test_lstm_gates_that_are_counted_twice_at_one_step():
    # braintrace 0.2.6 and 0.2.8 alike: c is computed from the input and candidate gates and h from
    # c's new value in the same step; the path through c is counted for c and again for h. The forget gate
    # multiplies c's old value, zero at rest: its first step is measured from the states the warm-up leaves
    result = probed(fixture("verify", "scaled.py"))["etrace_target_lstm"]
    found = by_rule(result, *PROBE_RULES)
    assert {(f.rule_id, finding_properties(f)["weight"]) for f in found} == {("ETL412", "Wi.weight"),
                                                                             ("ETL412", "Wg.weight"),
                                                                             ("ETL412", "Wf.weight")}
    for finding in found:
        assert "the online gradient of" in finding.message and "is 2.00x BPTT's, same direction" in finding.message
        assert "an LSTM's c feeding h" in finding.message
        moved = finding_properties(finding)["weight"] == "Wf.weight"
        assert ("measured from the states 2 steps of the inputs leave" in finding.message) == moved
        leaves = finding_properties(finding)["probe"]["leaves"]
        assert all(leaf["scale"] == pytest.approx(2.0, rel=1e-3) for leaf in leaves)
    # it still learns, at twice the rate: the relation stays
    assert "ETL001" in weight_rules(result, "Wi.weight")


def test_the_stateless_readout_verdict_follows_the_braintrace_line():
    result = probed(fixture("..", "..", "examples", "models", "static_readout.py"))["etrace_target_lstm_classifier"]
    rules = weight_rules(result, "readout")
    if OLD_LINE:  # 0.2.6 gives a stateless readout no online gradient under every single-step algorithm
        assert rules == {"ETL209"}  # said statically; the probe's measured zero confirms it
        (found,) = by_rule(result, "ETL209")
        assert [m["rule"] for m in finding_properties(found)["measured"]] == ["ETL411"]
        assert "readout does not learn online" in finding_properties(found)["measured"][0]["message"]
    else:  # 0.2.8 adds its exact same-step gradient
        assert "ETL411" not in rules and "ETL003" in rules


def test_the_probe_is_on_in_every_output_format_and_one_flag_away(tmp_path):
    # an LSTM's doubled gates: nothing in the graph says it, the probe measures it
    shutil.copy(fixture("verify", "scaled.py"), tmp_path / "scaled.py")
    target = "scaled.py::etrace_target_lstm"
    cell = line_of(fixture("verify", "scaled.py"), "cell = braintrace.nn.LSTMCell(3, 4)")
    # the probe is part of the cache key: the runs after this one are served its result only when they
    # probe too; one that did not would lint again without the probe and find nothing
    plain = run_cli(target, "--output-format", "json", "--no-probe", cwd=str(tmp_path))
    assert [f["rule"] for f in json.loads(plain.stdout)["findings"]] == [], plain.stderr
    # a whole multiple in BPTT's direction is braintrace's doing, not the model's: a note, so the default run of
    # an unchanged LSTM passes, and --show-info shows the figure in every format
    default = helpers.run_cli(target, cwd=str(tmp_path))
    assert default.returncode == 0 and "ETL412" not in default.stdout and "notes hidden" in default.stdout, (
        default.stdout + default.stderr)
    probed_text = run_cli(target, "--output-format", "concise", "--show-info", cwd=str(tmp_path))
    # the input, candidate and forget gates (the last from moved states), and the four gates' ETL001
    assert probed_text.stdout.count(f"scaled.py:{cell}:") == 3 + 4, probed_text.stderr
    assert probed_text.stdout.count("ETL412") == 3, probed_text.stdout
    flagged = run_cli(target, "--output-format", "json", "--show-info", cwd=str(tmp_path))
    assert [(f["rule"], f["level"]) for f in json.loads(flagged.stdout)["findings"]
            if f["rule"].startswith("ETL4")] == [("ETL412", "note")] * 3, flagged.stderr
    github = run_cli(target, "--output-format", "github", "--show-info", cwd=str(tmp_path))
    assert "::notice" in github.stdout and "ETL412" in github.stdout, github.stderr
    # these two in processes of their own: the second reads what the first wrote in the cache
    sarif = helpers.run_cli(target, "--sarif", "out.sarif", "--show-info", cwd=str(tmp_path))
    assert sarif.returncode == 0, sarif.stderr
    results = [r for r in json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
               if r["ruleId"].startswith("ETL4")]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("ETL412", "note", cell)] * 3
    # cached like the rest: a second run serves the probe's result from the cache without importing JAX
    again = helpers.run_cli(target, "--sarif", "again.sarif", "--show-info", cwd=str(tmp_path),
                            env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert [r for r in json.loads((tmp_path / "again.sarif").read_text())["runs"][0]["results"]
            if r["ruleId"].startswith("ETL4")] == results
    imported = {line.rsplit("|", 1)[-1].strip() for line in again.stderr.splitlines() if "|" in line}
    assert "etrace_lint.running.cache" in imported and not any(m.split(".")[0] == "jax" for m in imported)


def test_verify_measured_zero_also_replaces_the_relation():
    found = discover([fixture("probe", "zero.py") + "::etrace_target_centered"], REPO)
    (spec,) = found.targets
    result = lint_target(spec, REPO, EngineSettings(verify=True, verify_algorithms=["d_rtrl"]))
    # --verify's measured zero stands beside the static verdict that explains it, and names it
    assert weight_rules(result, "fc.weight") == {"ETL207", "ETL402"}
    (finding,) = by_rule(result, "ETL402")
    assert "(see ETL207" in finding.message
    assert finding_properties(finding)["staticEvidence"][0]["rule"] == "ETL001"
    assert by_rule(result, *PROBE_RULES) == []  # --verify measures what the probe would, and more


def test_a_weight_learning_against_bptt_on_every_draw_is_named_and_one_that_varies_is_not():
    result = probed(fixture("probe", "against.py"))["etrace_target_delayed_inhibition"]
    (finding,) = by_rule(result, *PROBE_RULES)
    assert finding.rule_id == "ETL415" and finding.level is Level.WARNING
    assert finding.line == marked("against.py", "ETL415")
    # the bias points against BPTT on each of the 3 draws from rest and on one from moved states; the input weight
    # only on some, so it is not named
    assert finding.message.startswith("w.weight['bias'] learns against BPTT under d_rtrl: measured over 4 steps")
    assert "on 4 input draws (the last from states moved from rest)" in finding.message
    assert "['weight']" not in finding.message
    draws = [float(c) for c in finding.message.split("cosine ")[1].split(" on ")[0].replace(" and", ",").split(", ")]
    assert len(draws) == 4 and max(draws) < 0


def test_a_leaf_against_bptt_in_a_weight_that_as_a_whole_is_not_learns_approximately():
    # ES-D-RTRL's lora_a points against BPTT over the sequence on every draw that drives it; the whole LoRA weight
    # does not (braintrace's referee measures it at cosine -0.075 with BPTT's, as good as orthogonal)
    against = probed(fixture("probe", "against.py"))["etrace_target_delayed_inhibition"]
    lora = probed(fixture("probe", "leaf_against.py"))["etrace_target_synapse_lora"]
    assert learning_graph("t", against.findings).weights() == {"w.weight": WeightVerdict.AGAINST}
    (finding,) = by_rule(lora, "ETL423", "ETL415")
    assert finding.rule_id == "ETL423" and finding.level is Level.WARNING
    assert finding.line == marked("leaf_against.py", "ETL423")
    assert finding.message.startswith("lora.weight['lora_a'] learns against BPTT under es_d_rtrl: measured over 4 "
                                      "steps")

    def cosines(text: str) -> list[float]:
        return [float(c) for c in re.findall(r"-?\d+\.\d+", text.split(" on ")[0])]

    leaf, more, whole = finding.message.split("cosine ")[1], finding.message.split(", then ")[1], \
        finding.message.split("cosine ")[2]
    assert cosines(leaf) and max(cosines(leaf) + cosines(more)) < 0  # measured on the further draws too
    assert max(cosines(whole)) > 0 and "so it learns approximately" in finding.message
    assert learning_graph("t", lora.findings).weights()["lora.weight"] is WeightVerdict.APPROXIMATE


def test_a_weight_no_input_drives_is_not_measured_and_not_said_to_learn():
    # a layer norm over w * mean(x) removes the mean's scale: BPTT's gradient of the layers before it is round-off
    result = probed(fixture("probe", "not_driven.py"))["etrace_target_mean_through_norm"]
    found = by_rule(result, "ETL424")
    assert sorted(f.line for f in found) == sorted(line for line, rule in expected_markers(
        fixture("probe", "not_driven.py")) if rule == "ETL424")
    lora = next(f for f in found if f.message.startswith("l0_lora.weight's online gradient under d_rtrl is not "
                                                          "measured"))
    assert lora.level is Level.NOTE and "round-off (norm " in lora.message and "x the model's largest)" in lora.message
    largest = float(lora.message.split("x the model's largest")[0].rsplit(", ", 1)[1])
    assert largest < 1e-5  # below the probe's floor: what neither gradient can be told from
    weights = learning_graph("t", result.findings).weights()
    # the compiler's "learns online" is kept as evidence, not shown as a verdict no measurement backs
    assert weights["l0_lora.weight"] is WeightVerdict.NOT_MEASURED
    assert weight_rules(result, "l0_lora.weight") == {"ETL424"}
    # a weight the inputs drive is measured as before: the readout's bias and weight are
    assert weights["ro_fc.weight"] is not WeightVerdict.NOT_MEASURED


@pytest.mark.parametrize("name", ["synapse.py", "conv_bias.py", "zero.py", "against.py", "not_measured.py",
                                  "product.py", "deviates.py", "partly.py", "learner_options.py",
                                  "measured_nothing.py", "exact_despite_exclusion.py", "leaf_against.py"])
def test_probe_fixtures_report_exactly_their_marked_lines(name):
    # a synapse feeding a membrane in the same step doubles the input weight's gradient at one step;
    # the membrane reading the synapse's old value does not
    assert_fixture(fixture("probe", name), shared=True, probe=True)


def test_a_learner_braintrace_cannot_build_refuses_every_weight_and_fails_the_run(tmp_path):
    # the decay is the target's own option: braintrace.ES_D_RTRL asserts it is in [0, 1) when the script
    # builds the learner, after the model compiled
    path = str(tmp_path / "learner_options.py")
    shutil.copy(fixture("probe", "learner_options.py"), path)
    run = run_cli(path, "--no-cache", "--output-format", "json", cwd=str(tmp_path))
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    (refused,) = [f for f in report["findings"] if f["rule"] == "ETL419"]
    assert refused["model"] == "etrace_target_decay_out_of_range" and refused["level"] == "error"
    assert "decay should be in [0, 1)" in refused["message"]
    assert refused["properties"]["probe"] == {"algorithm": "es_d_rtrl", "batch": None, "exception": "AssertionError"}
    results = probed(fixture("probe", "learner_options.py"))
    kept = results["etrace_target_decay_out_of_range"].findings
    assert learning_graph("t", kept).weights() == {"w_in": WeightVerdict.REFUSED}
    assert by_rule(results["etrace_target_decay_in_range"], *PROBE_RULES) == []


def test_a_model_the_probe_measured_nothing_of_says_why_and_what_to_do():
    results = probed(fixture("probe", "measured_nothing.py"))
    said = {name: [f.message for f in by_rule(result, "ETL420")] for name, result in results.items()}
    (integer,) = said["etrace_target_integer_output"]
    assert "BPTT's gradient of every weight is zero over 4 steps" in integer and "verify={'inputs'" in integer
    (infinite,) = said["etrace_target_infinite_weight"]
    assert "zero or not finite" in infinite and "JAX_DEBUG_NANS=1" in infinite
    (option,) = said["etrace_target_unreadable_option"]
    assert "verify option 'steps' must be a positive integer" in option
    assert "correct the target's verify options" in option
    # a step that is not a pure function of its states and inputs: the two runs computed different functions, and
    # no gradient of theirs is compared (it read "learns approximately", its first step 1.2x BPTT's)
    (counter,) = said["etrace_target_python_counter"]
    assert "computed different forward losses from the same states and inputs" in counter
    assert "keep everything the step reads in brainstate states" in counter
    assert learning_graph("t", results["etrace_target_python_counter"].findings).weights() == {
        "w_in": WeightVerdict.LEARNS}
    # a note: what the graph says of the weight stays its verdict, and the run does not fail for it
    assert all(f.level is Level.NOTE for result in results.values() for f in by_rule(result, "ETL420"))
    infinite_findings = results["etrace_target_infinite_weight"].findings
    assert learning_graph("t", infinite_findings).weights() == {"w_in": WeightVerdict.LEARNS}


def test_a_zero_on_one_draw_that_another_draw_does_not_show_is_not_claimed():
    # the first draw keeps the spike's surrogate silent, the second does not: "does not learn" would be untrue
    result = probed(fixture("probe", "not_measured.py"))["delayed"]
    assert "ETL417" in weight_rules(result, "fc.weight") and not by_rule(result, "ETL411")
    (finding,) = by_rule(result, "ETL417")
    assert finding.level is Level.NOTE and finding.line == marked("not_measured.py", "ETL417")
    assert "is not measured" in finding.message and "exactly zero on the probe's first input draw" in finding.message
    # the draws that refute the zero are listed, those that show it too are counted
    refuting = re.search(r"but (\S+)x BPTT's norm on (?:1 of (\d) other input draws|1 other input draw),",
                         finding.message)
    assert refuting is not None, finding.message
    assert 0 < float(refuting.group(1)) < 1


def test_a_first_step_that_points_another_way_is_reported_with_its_figure():
    result = probed(fixture("probe", "deviates.py"))["normalized"]
    (finding,) = by_rule(result, "ETL416")
    assert finding.level is Level.WARNING and finding_properties(finding)["weight"] == "fc.weight"
    figure = finding.message.split("under d_rtrl is ")[1].split(":")[0]
    ratio, cosine = float(figure.split("x BPTT's norm")[0]), float(figure.split("cosine ")[1])
    assert ratio > 0 and 0 < cosine < 0.99, finding.message
    assert finding_properties(finding)["probe"]["steps"] == 1


def test_a_weight_that_gets_only_its_same_step_gradient_learns_partly_and_is_not_called_silent():
    # a layer norm's scale in a synapse cell (seed 47's model 441, shrunk): over 4 steps its online gradient is
    # 1e-6 of BPTT's on every draw, while at the first step from moved states it is BPTT's own
    name = "fuzz_does_not_learn_learns_layer_norm_s_scale_after_linear_in_syn"
    result = probed(fixture("fuzz", name + ".py"))["etrace_target"]
    assert "ETL411" not in weight_rules(result, "l0_norm.weight")
    (finding,) = [f for f in by_rule(result, "ETL418") if finding_properties(f)["weight"] == "l0_norm.weight"]
    assert finding.level is Level.NOTE
    assert "zero up to float32 rounding" in finding.message
    assert "through its same-step gradient alone" in finding.message
    figure = re.search(r"it is (\S+)x BPTT's norm on (\d+) of (\d+) input draws", finding.message)
    assert figure is not None, finding.message
    assert abs(float(figure.group(1)) - 1) < 0.01 and 1 <= int(figure.group(2)) <= int(figure.group(3))
    assert learning_graph("t", result.findings).weights()["l0_norm.weight"] is WeightVerdict.PARTLY


def test_a_first_step_against_bptts_on_every_draw_that_drives_it_learns_against_bptt():
    # an element-wise weight in a fori_loop, then an RMSNorm (seed 47's model 509, shrunk): its first step, which
    # must be BPTT's, has a cosine of -0.6 with it on each draw; over 4 steps the draws do not agree
    name = "fuzz_learns_approximately_learns_against_bptt_element_wise_in_lea"
    result = probed(fixture("fuzz", name + ".py"))["etrace_target"]
    (finding,) = by_rule(result, "ETL415")
    assert finding_properties(finding)["weight"] == "l2_w" and finding.level is Level.WARNING
    assert finding_properties(finding)["probe"]["steps"] == 1
    assert "at the first step, where it must equal BPTT's" in finding.message
    listed = finding.message.split("cosine ")[2].split(" on ")[0].replace(" and", ",").split(", ")
    cosines = [float(c) for c in listed if c != "n/a"]
    assert len(cosines) >= 2 and max(cosines) < -0.1, finding.message
    # l1_w's first step is not BPTT's either, but points its way: a deviation with its figure, not a direction
    assert weight_rules(result, "l1_w") & {"ETL416", "ETL415"} == {"ETL416"}


def test_a_weight_that_learns_through_another_path_learns_partly():
    result = probed(fixture("probe", "partly.py"))
    (two_uses,) = by_rule(result["two_uses"], "ETL201")
    # the path through the plain `@` is missing from a gradient that is still there: said once, with the figure
    assert "it learns partly" in two_uses.message and not by_rule(result["two_uses"], "ETL416", "ETL418")
    (plain,) = by_rule(result["plain_input"], "ETL201")
    if OLD_LINE:  # 0.2.6 adds no same-step gradient: the plain path was the weight's only one
        assert "gets no online gradient:" in plain.message and "learns partly" not in plain.message
        assert [m["rule"] for m in finding_properties(plain)["measured"]] == ["ETL411"]
    else:  # 0.2.8 adds the same-step gradient of its path into the output
        assert "gets no online gradient through this use" in plain.message and "it learns partly" in plain.message
        assert [m["rule"] for m in finding_properties(plain)["measured"]] == ["ETL418"]


def test_an_excluded_weight_whose_gradient_is_bptts_on_every_draw_learns_and_fails_no_run():
    path = fixture("probe", "exact_despite_exclusion.py")
    (excluded,) = by_rule(probed(path)["after_the_state"], "ETL005")
    verdicts = etrace_lint.check_target(path).weights()["after-the-state"]
    if OLD_LINE:  # 0.2.6 adds no same-step gradient: the excluded weight gets nothing at all
        assert excluded.level is Level.WARNING and "it will not learn online" in excluded.message
        assert verdicts["w_mid"] == "does not learn"
        return
    # its output feeds no state: the same-step gradient braintrace adds is all of it, measured from rest and
    # from moved states, so the exclusion is a note and the weight learns
    assert excluded.level is Level.NOTE, excluded.message
    assert "it will not learn online" not in excluded.message and "learns online as BPTT does" in excluded.message
    assert "(the last from states moved from rest)" in excluded.message
    assert [m["rule"] for m in finding_properties(excluded)["measured"]] == ["ETL421"]
    assert verdicts["w_mid"] == "learns"
    run = run_cli(path, "--no-cache")
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_excluded_weights_gradient_is_bptts_within_the_rounding_verify_reads_exactness_by():
    # ETL421 calls a denied weight's gradient BPTT's on every draw as --verify's ETL401 reads exactness: within
    # float32's tolerance, or BPTT's direction (cosine at least 0.9999) within 1% of its size, as float32 through
    # an ill-conditioned op (a batch norm over a batch of two) rounds it; a part of the gradient missing is not
    import numpy as np

    from etrace_lint.verify import verdict as judge
    from etrace_lint.verify.probe.measure import LeafSignal

    key = (("fc", "weight"), "")
    bptt = {key: np.array([3.0, -1.0, 2.0, 0.5])}
    rounded = {key: bptt[key] * 1.004}  # 0.4% larger, its direction
    short = {key: bptt[key] * np.array([1.0, 1.0, 1.0, 0.0])}  # one element's gradient left out
    tolerance = 1e-5

    def signal(*onlines: dict) -> LeafSignal:
        distances = tuple(judge.distance_on_draw(bptt, online, key, 0.0, tolerance) for online in onlines)
        return LeafSignal(key[0], "", 4, 1.0, 1.0, 0.0, None, (), None, exact_draws=distances, tolerance=tolerance)

    assert signal(bptt, rounded, rounded).exact_on_every_draw
    assert not signal(bptt, rounded, short).exact_on_every_draw
    assert judge.distance_on_draw(bptt, rounded, key, 0.0, tolerance) == pytest.approx(0.004, rel=1e-3)
    # a draw that does not drive the weight says nothing
    assert judge.distance_on_draw({key: np.zeros(4)}, rounded, key, 1e-6, tolerance) is None


def _about_fc(rule_id: str, level: Level, message: str) -> Finding:
    """A finding about the weight ``fc.weight`` of a model ``t``, on line 3 of /m.py."""
    return Finding(rule_id, level, message, "t", Location("/m.py", 3),
                   subject=Subject(weight="fc.weight", weight_path=("fc", "weight")))


# ETL005: the compiler excludes fc.weight
_EXCLUDED = ("ETL005", Level.WARNING, "fc.weight reaches a hidden state only through w's op, so the compiler "
             "excludes fc.weight: it will not learn online")


def test_an_excluded_weight_exact_on_one_leaf_and_partly_on_another_learns_partly():
    from etrace_lint.engine.evidence import one_verdict_per_weight

    excluded = _about_fc(*_EXCLUDED)
    exact = _about_fc("ETL421", Level.NOTE, "measured ... fc.weight['bias']'s online gradient is BPTT's")
    partly = _about_fc("ETL418", Level.NOTE, "measured ... fc.weight['weight']'s online gradient is not zero")
    (kept,) = one_verdict_per_weight([excluded, exact, partly])
    # the kernel misses what the excluded use carries: the weight learns partly, and the warning stands
    assert kept.level is Level.WARNING and "learns online as BPTT does" not in kept.message
    assert learning_graph("t", [kept]).weights() == {"fc.weight": WeightVerdict.PARTLY}
    (alone,) = one_verdict_per_weight([excluded, exact])
    assert alone.level is Level.NOTE and learning_graph("t", [alone]).weights() == {"fc.weight": WeightVerdict.LEARNS}


def test_a_gradient_measured_beside_an_exclusion_is_learning_and_says_how():
    from etrace_lint.engine.evidence import one_verdict_per_weight

    excluded = _about_fc(*_EXCLUDED)
    against = _about_fc("ETL415", Level.WARNING, "fc.weight learns against BPTT under d_rtrl")
    misaligned = _about_fc("ETL404", Level.WARNING, "d_rtrl online gradient of fc.weight is poorly aligned")
    zero = _about_fc("ETL402", Level.WARNING, "fc.weight gets no online gradient under d_rtrl")

    def verdict(*findings: Finding) -> WeightVerdict:
        return learning_graph("t", one_verdict_per_weight(list(findings))).weights()["fc.weight"]

    # a measurement that stands beside the exclusion (not folded into it) says the gradient is not zero
    assert verdict(excluded, against) is WeightVerdict.AGAINST
    assert verdict(excluded, misaligned) is WeightVerdict.PARTLY
    # a measured zero confirms the exclusion
    assert verdict(excluded, zero) is WeightVerdict.ZERO
    assert verdict(excluded) is WeightVerdict.ZERO


def test_the_verdicts_of_weights_that_learn_partly_are_read_by_the_api():
    path = fixture("probe", "partly.py")
    assert etrace_lint.check_target(f"{path}::two_uses").weights() == {"two-uses": {"w": "learns partly"}}
    plain = etrace_lint.check_target(f"{path}::plain_input").weights()["plain-input"]
    assert plain["w_in"] == ("does not learn" if OLD_LINE else "learns partly")


def test_a_factored_weight_is_not_told_to_take_a_shape_it_cannot_have():
    result = probed(fixture("probe", "product.py"))["factored"]
    (raised,) = by_rule(result, "ETL410")
    assert raised.line == marked("product.py", "ETL410")
    # (4, 2) against a (4, 4) gradient: no shape of w_a has 16 elements and still multiplies w_b
    assert "give w_a the shape" not in raised.message and "one ETP op per factor" in raised.message
    # the step raises for the model: nothing says w_a learns online beside it
    assert not by_rule(result, "ETL001")


def test_a_model_whose_online_step_raises_has_no_weight_said_to_learn():
    from etrace_lint.engine.evidence import one_verdict_per_weight

    here = Location("/m.py", 3)
    learns = [Finding("ETL001", Level.NOTE, f"{w} learns online: its matmul here drives h", "t", here,
                      subject=Subject(weight=w, weight_path=(w,))) for w in ("w_a", "w_b")]
    raised = Finding("ETL410", Level.ERROR, "the model compiles, but its first online training step raises", "t",
                     Location("/m.py", 9))
    kept = one_verdict_per_weight([*learns, raised])
    assert [f.rule_id for f in kept] == ["ETL410"]
    assert [(e.rule, e.weight) for e in kept[0].static_evidence] == [("ETL001", "w_a"), ("ETL001", "w_b")]
    assert learning_graph("t", kept).weights() == {"w_a": WeightVerdict.STEP_RAISES, "w_b": WeightVerdict.STEP_RAISES}


def test_a_weight_the_online_rule_moves_where_bptt_gives_it_nothing_is_named():
    results = probed(fixture("probe", "online_without_bptt.py"))
    stopped = results["etrace_target_stopped_operand"]
    (finding,) = by_rule(stopped, "ETL422")
    assert finding.level is Level.WARNING
    assert "w's online gradient under d_rtrl is not zero" in finding.message
    assert "BPTT gradient is exactly zero" in finding.message and "stop_gradient" in finding.message
    assert not by_rule(stopped, "ETL420", "ETL001")  # it measured something; "learns online" is not what it does
    verdicts = learning_graph("t", stopped.findings).weights()
    assert verdicts == {"w": WeightVerdict.APPROXIMATE}
    assert not by_rule(results["etrace_target_unstopped"], "ETL422")
    # a quantized weight: the advice is a straight-through estimator, not to freeze it
    (rounded,) = by_rule(results["etrace_target_rounded_operand"], "ETL422")
    assert "if w is rounded on purpose and should learn (a quantized weight), round it with a straight-through " \
           "estimator, `x + jax.lax.stop_gradient(f(x) - x)`" in rounded.message
    assert "if it is meant to stay fixed, keep w out of the parameters the learner trains" in rounded.message


def test_a_first_step_the_first_draw_never_drives_is_measured_where_inputs_do_and_the_message_says_which():
    # a LoRA weight in a leak cell read by a spiking layer: on the probe's first draw the layer's output stays 0
    # through the first steps, from rest and from moved states, so the squared loss has no gradient there; another
    # draw's moved states (or larger inputs) drive it, and its first step is not BPTT's there (seed 61's model 2,
    # shrunk; before, the lint said it learns, on the compiler's relation alone)
    path = fixture("fuzz", "fuzz_learns_learns_approximately_lora_in_leak_cell.py")
    result = etrace_lint.check_target(path)
    (first,) = [f for f in result.findings if f.rule_id == "ETL416"]
    assert finding_properties(first)["weight"] == "l0_lora.weight"
    assert re.search(r"measured on (the inputs scaled up \d+ times|another draw of the inputs)", first.message)
    (verdicts,) = result.weights().values()
    assert verdicts["l0_lora.weight"] == WeightVerdict.APPROXIMATE.value
