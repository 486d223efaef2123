"""What tests/test_real_models*.py share: the lint runs and the referee over a part of the corpus, and
the checks of each target's verdicts (tests/test_real_models.py says what is checked and why).

The corpus is linted and judged in five parts, one test file each, by the first letter of its files'
names: no file of the suite runs for minutes, and a corpus file added later falls into a part by its name.
"""


from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from helpers import REPO
from online_referee import BPTT_FLOOR, TargetSpec, TargetTruth, declared_targets, judge_folder

from etrace_lint.core.registry import all_rules
from etrace_lint.core.weight_verdict import WeightVerdict

FOLDER = os.path.join("tests", "real_models")
TARGETS = declared_targets(os.path.join(REPO, FOLDER))
# default: as a user or a CI job runs it (the probe on, also writing a SARIF log: docs/integrations/github.md);
# every output format gives the same findings (tests/test_one_answer.py), so one run stands for all of them
RUNS = ("default", "verify")


def _saying(verdict: WeightVerdict) -> frozenset[str]:
    """The rules whose findings say ``verdict`` of the weight they name (their ``says``)."""
    return frozenset(rule.id for rule in all_rules().values() if rule.says is verdict)


# "learns online" and "learns from same-step gradients, which is exact" (ETL001, ETL003), and ETL019's readout
CLAIMS = _saying(WeightVerdict.LEARNS)
# the claims a measurement replaces: each says how the weight learns (through its trace, from its same-step
# gradient), so two of them about one weight contradict each other (ETL019 names what reaches the output, and adds
# the same-step gradient ETL003 speaks of)
RIVALS = frozenset(beaten for rule in all_rules().values() for beaten in rule.supersedes) & CLAIMS
# "learns a plain path within each window" (a multi-step VJP): the weight's online gradient is not zero
WITHIN_WINDOW = _saying(WeightVerdict.WITHIN_WINDOW)
# findings that say a weight gets no online gradient at all (a partial path, ETL006, is not one)
DENIALS = _saying(WeightVerdict.ZERO)
# a measurement folded into a denial that says the weight learns partly after all: the denial is of one use only
PARTLY = _saying(WeightVerdict.PARTLY)
EXACT = 1e-4  # the relative error an online gradient said to be exact may show in float32


# Disagreements that remain, by (target, run), each with the mechanism behind it (read in braintrace's
# source, measured by the referee). A new one is added here with its mechanism, or fixed.
KNOWN: dict[tuple[str, str], str] = {}


# --verify compiles its jitted steps as training does, unless JAX_DISABLE_MOST_OPTIMIZATIONS in the
# environment says otherwise (docs/guide/cache.md, "Workers"); the referee compiles unoptimised too
# (online_referee.quick_compiles). XLA's optimisations change float32 rounding, never a verdict
# compared here, and compiling unoptimised is most of what the run saves.
QUICK_COMPILES = {"JAX_DISABLE_MOST_OPTIMIZATIONS": "1"}


def _cli(files: tuple[str, ...], *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "etrace_lint", *(os.path.join(FOLDER, f) for f in files),
                           "--output-format", "json", "--show-info", "--no-cache", "-q", *args],
                          cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=900)


def _document(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode in (0, 1, 2), done.stderr[-3000:]
    return json.loads(done.stdout)


def _lint_runs(files: tuple[str, ...], sarif: str) -> dict[str, subprocess.CompletedProcess]:
    """The two runs one after another: each lints every target afresh (--no-cache), and each later
    one loads from the session's folder of compiled programs what an earlier one compiled (the models'
    initialisers, the one-step programs the probe and --verify both build, unoptimised), as a user's
    runs share their cache folder's. Measured on 3.11: 296 s CPU in a row against 352 s side by side."""
    return {"default": _cli(files, "--sarif", sarif), "verify": _cli(files, "--verify", env=QUICK_COMPILES)}


def corpus_part(first: str, last: str) -> tuple[str, ...]:
    """The corpus's files whose names begin with a letter from ``first`` to ``last``."""
    return tuple(sorted({spec.file for spec in TARGETS if first <= spec.file[0] <= last}))


PARTS = (("a", "b"), ("c", "f"), ("g", "l"), ("m", "r"), ("s", "z"))  # tests/test_real_models_<first>_<last>.py


def part_targets(files: tuple[str, ...]) -> list[TargetSpec]:
    return [spec for spec in TARGETS if spec.file in files]


def lint_and_judge(files: tuple[str, ...], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The lint runs of ``files``, in a thread started first, and the referee, in this process while they run."""
    sarif = str(tmp_path_factory.mktemp("real-models") / "etrace-lint.sarif")
    with ThreadPoolExecutor(max_workers=1) as pool:
        runs = pool.submit(_lint_runs, files, sarif)
        truths = judge_folder(os.path.join(REPO, FOLDER), files=files)
        return {"truths": truths, **{run: _document(done) for run, done in runs.result().items()}}


def _path(finding: dict) -> tuple[str, ...] | None:
    path = finding.get("properties", {}).get("weightPath")
    return tuple(str(part) for part in path) if path else None


def disagreements(truth: TargetTruth, document: dict) -> list[str]:
    findings = [f for f in document["findings"] if f["model"] == truth.target]
    errors = [e for e in document["toolErrors"] if e.get("model") == truth.target]
    if truth.stage in ("compile", "step"):
        if errors or any(f["level"] == "error" for f in findings):
            return []
        what = "learner cannot be built" if truth.stage == "compile" else "online step raises"
        return [f"{truth.algorithm}: braintrace's {what} ({truth.error}), and no error says so "
                f"(findings: {sorted({f['rule'] for f in findings}) or 'none'})"]
    wrong = []
    if truth.refused and not errors and not any(f["level"] in ("warning", "error") for f in findings):
        wrong.append(f"braintrace.compile refuses the model ({truth.refused}), and no warning or error says so")
    for weight in truth.weights:
        about = [f for f in findings if _path(f) == weight.path]
        claims = sorted({f["rule"] for f in about if f["rule"] in CLAIMS})
        warned = [f for f in about if f["level"] in ("warning", "error")]
        name = ".".join(weight.path)
        if claims and not weight.finite:
            wrong.append(f"{name}: {'/'.join(claims)} says it learns, but its {truth.algorithm} online gradient is "
                         f"not finite")
        elif claims and not weight.learns and weight.bptt_norm > BPTT_FLOOR:
            wrong.append(f"{name}: {'/'.join(claims)} says it learns, but its {truth.algorithm} online gradient "
                         f"is zero ({weight.describe()})")
        windowed = sorted({f["rule"] for f in about if f["rule"] in WITHIN_WINDOW})
        if windowed and not weight.learns and weight.bptt_norm > BPTT_FLOOR:
            wrong.append(f"{name}: {'/'.join(windowed)} says it learns within each window, but its "
                         f"{truth.algorithm} online gradient is zero ({weight.describe()})")
        exact = [f for f in about if f["rule"] == "ETL003" and "exact" in f["message"]]
        if exact and weight.learns and weight.rel_error is not None and weight.rel_error > EXACT:
            wrong.append(f"{name}: ETL003 says its same-step gradient is exact, but it is not "
                         f"({weight.describe()})")
        denials = sorted({f["rule"] for f in about if f["rule"] in DENIALS
                          and not any(m["rule"] in PARTLY for m in f.get("properties", {}).get("measured", []))})
        # a claim beside a denial is a weight that learns through some of its uses only ("learns partly"):
        # true when its online gradient is not zero, which the claim's own check above asks
        if len([claim for claim in claims if claim in RIVALS]) > 1:
            wrong.append(f"{name}: two verdicts, {'/'.join(claims + denials)}")
        if denials and not claims and weight.learns:
            wrong.append(f"{name}: {'/'.join(denials)} says it gets no online gradient, but its {truth.algorithm} "
                         f"online gradient is not zero ({weight.describe()})")
        if weight.silent and not warned:
            wrong.append(f"{name}: its {truth.algorithm} online gradient is zero while BPTT's is not "
                         f"({weight.describe()}), and no warning or error names it "
                         f"(findings about it: {sorted({f['rule'] for f in about}) or 'none'})")
    return wrong


def cases(files: tuple[str, ...]) -> list[Any]:
    """(target, run) for each target of ``files`` and each run, a known disagreement marked as such."""
    found = []
    for spec in part_targets(files):
        for run in RUNS:
            reason = KNOWN.get((spec.name, run))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            found.append(pytest.param(spec.name, run, id=f"{spec.name}-{run}", marks=marks))
    return found


def part_tests(first: str, last: str) -> tuple[Any, Any]:
    """The fixture and the test of the part ``first``-``last``, for its file to bind at module level as
    ``verdicts`` and ``test_verdicts_agree_with_the_online_gradient``: the part is linted and judged once for
    its module, each (target, run) checked by :func:`check_verdicts`."""
    files = corpus_part(first, last)

    @pytest.fixture(scope="module")
    def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
        return lint_and_judge(files, tmp_path_factory)

    @pytest.mark.parametrize("target, run", cases(files))
    def test_verdicts_agree_with_the_online_gradient(verdicts: dict[str, Any], target: str, run: str) -> None:
        check_verdicts(verdicts, target, run)

    return verdicts, test_verdicts_agree_with_the_online_gradient


def check_verdicts(verdicts: dict[str, Any], target: str, run: str) -> None:
    truths = [truth for truth in verdicts["truths"] if truth.target == target]
    assert truths, f"the referee judged no algorithm of {target}"
    unjudged = [t for t in truths if t.stage in ("build", "bptt")]
    assert not unjudged, f"the model itself does not run: {[t.error for t in unjudged]}"
    linted = {f["model"] for f in verdicts[run]["findings"]} | {e.get("model") for e in verdicts[run]["toolErrors"]}
    assert target in linted, f"the {run} run reports nothing about {target}"
    wrong = [line for truth in truths for line in disagreements(truth, verdicts[run])]
    assert not wrong, "\n".join(wrong)
