"""The advisor's ``compiles`` column is ``braintrace.compile``'s verdict, algorithm by algorithm.

The reference is ``braintrace.compile(model, algorithm, x, batch_size=B, **options)`` on a fresh copy of the
model from its factory, with the target's example inputs at the batch the advisor measured at: what a user who
calls the documented entry point gets. It is compared with ``etrace-lint advise`` as a user runs it on a model
with no hidden state (which braintrace.compile refuses under every algorithm: nothing to train online), with
the advisor's rows on real models it refuses in different ways or accepts, and with the advisor's verdict on
every model of tests/real_models.
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np
import pytest
from helpers import REPO
from in_process import run_cli

brainstate = pytest.importorskip("brainstate")
braintrace = pytest.importorskip("braintrace")
import jax.numpy as jnp  # noqa: E402
import online_referee as ref  # noqa: E402
from online_referee import TARGET_ATTRIBUTE, declared_targets  # noqa: E402

from etrace_lint.analysis import braintrace_adapter as bt  # noqa: E402
from etrace_lint.verify.advise.algorithms import installed  # noqa: E402
from etrace_lint.verify.advise.fidelity import AdviceHarness  # noqa: E402
from etrace_lint.verify.advise.run import AdviceSettings, advise_model  # noqa: E402
from etrace_lint.verify.settings import VerifySettings  # noqa: E402

NO_HIDDEN_STATE = "tests/fixtures/advise/models.py::etrace_target_no_hidden_state"
REAL = os.path.join(REPO, "tests", "real_models")
CORPUS = declared_targets(REAL)
# measured end to end: where the learner's graph cannot be built; where braintrace.compile, initialising the
# states again, breaks a brainstate.nn.Map that the learner built from its class on the model's own states
# would run; and a model accepted under every algorithm
MEASURED = [("sparch_lif.py", "sparch_rlif_two_states"), ("gru_map_batched.py", "gru_map_batched"),
            ("stacked_rnn.py", "two_layer_gru")]
REFUSAL = "No trainable weights are routed through ETP ops"


@functools.cache
def _factory(path: str, name: str):
    return getattr(ref.load(path, "compiles_" + os.path.basename(path)[:-3]), name)


def _declared(factory) -> dict:
    return getattr(factory, TARGET_ATTRIBUTE, {}) or {}


def _at_batch(inputs: tuple, declared: int | None, batch: int | None) -> tuple:
    """The example inputs with ``batch`` rows, as the advisor measured them (None: unbatched)."""
    one = tuple(x[0] if declared is not None else x for x in inputs)
    return one if batch is None else tuple(jnp.broadcast_to(x, (batch, *np.shape(x))) for x in one)


def _braintrace_compiles(factory, algorithm, batch: int | None) -> tuple[bool, str]:
    """braintrace.compile's verdict on a fresh copy of the model, at the batch the advisor measured."""
    declared = _declared(factory)
    with brainstate.environ.context(**declared.get("environ", {})), bt.quiet([]):
        model, inputs = factory()[:2]
        try:
            braintrace.compile(model, algorithm.constructor(), *_at_batch(inputs, declared.get("batch_size"), batch),
                               batch_size=batch, **algorithm.options)
        except Exception as exc:  # noqa: BLE001 - any refusal is "does not compile"
            return False, f"{type(exc).__name__}: {exc}"
    return True, ""


@pytest.mark.parametrize("file, name", MEASURED, ids=[name for _, name in MEASURED])
def test_the_compiles_column_is_what_braintrace_compile_answers_for_every_algorithm(file, name):
    factory = _factory(os.path.join(REAL, file), name)
    declared = _declared(factory)
    with brainstate.environ.context(**declared.get("environ", {})):
        model, inputs = factory()[:2]
        rows = advise_model(model, inputs, target=name, batch_size=declared.get("batch_size"),
                            settings=AdviceSettings(steps=2))
    by_label = {row.label: row for row in rows}
    assert set(by_label) == {algorithm.label for algorithm in installed()}
    answers = {}
    for algorithm in installed():
        row = by_label[algorithm.label]
        compiles, error = _braintrace_compiles(factory, algorithm, row.measured_batch)
        answers[algorithm.label] = compiles
        assert row.compiles == compiles, (algorithm.label, row.error, error)
        if not compiles:  # nothing measured, and braintrace's own words say why
            assert not row.runs and not row.recommended, algorithm.label
            assert row.error.startswith(f"braintrace.compile raised {error.split(':')[0]}:"), (row.error, error)
    assert all(answers.values()) if name == "two_layer_gru" else not any(answers.values())


def _verdicts(factory) -> tuple[int | None, dict[str, str | None]]:
    """The batch the advisor measures the model at, and its verdict per algorithm there (None: compiles): as
    ``advise_model`` makes them, after the layout is settled by one step of BPTT (evaluated, not compiled)."""
    declared = _declared(factory)
    algorithms = {algorithm.label: algorithm for algorithm in installed()}
    with brainstate.environ.context(**declared.get("environ", {})), bt.quiet([]):
        model, inputs = factory()[:2]
        weights = bt.step_param_states(braintrace.extract_module_info(model, *inputs))
        harness = AdviceHarness(model, tuple(inputs), declared.get("batch_size"), weights,
                                VerifySettings(steps=1, algorithms=tuple(algorithms)), algorithms=algorithms,
                                interpret=True)
        try:
            harness.settle([1], None)
            return harness.batch, {label: harness.compile_refusal(label) for label in algorithms}
        finally:
            harness.close()


@pytest.mark.parametrize("spec", CORPUS, ids=[spec.name for spec in CORPUS])
def test_every_corpus_model_compiles_where_braintrace_compile_accepts_it(spec):
    factory = _factory(os.path.join(REAL, spec.file), spec.factory)
    batch, verdicts = _verdicts(factory)
    wrong = []
    for algorithm in installed():
        compiles, error = _braintrace_compiles(factory, algorithm, batch)
        refusal = verdicts[algorithm.label]
        if (refusal is None) != compiles or (REFUSAL in error) != (REFUSAL in (refusal or "")):
            wrong.append(f"{algorithm.label}: advisor {refusal or 'compiles'}; braintrace.compile "
                         f"{error or 'compiles'}")
    assert not wrong, "\n".join(wrong)


def test_advise_says_what_braintrace_compile_says_of_a_model_without_hidden_state(tmp_path):
    """As a user runs it: every algorithm, the JSON rows and the text table (the command line in this
    process, tests/in_process.py: what the run reports is the question, not its workers)."""
    path, _, name = NO_HIDDEN_STATE.partition("::")
    factory = _factory(os.path.join(REPO, path), name)
    cache = str(tmp_path / "cache")
    done = run_cli("advise", NO_HIDDEN_STATE, "--steps", "2", "--no-probe", "--cache-dir", cache,
                   "--output-format", "json")
    rows = {(row["algorithm"], row["options"].get("vjp_method")): row for row in json.loads(done.stdout)["advice"]}
    assert len(rows) == len(installed()), done.stdout
    for algorithm in installed():
        row = rows[(algorithm.name, algorithm.options.get("vjp_method"))]
        compiles, error = _braintrace_compiles(factory, algorithm, row["measured_batch"])
        assert row["compiles"] == compiles, (algorithm.label, row["error"], error)
        assert not compiles and REFUSAL in error  # braintrace.compile's guardrail, on both braintrace lines
        assert not row["runs"] and REFUSAL in row["error"], row
    text = run_cli("advise", NO_HIDDEN_STATE, "--steps", "2", "--no-probe", "--cache-dir", cache).stdout
    table = {cells[0]: cells[1:3] for cells in map(str.split, text.splitlines())
             if cells and cells[0] in {algorithm.label for algorithm in installed()}}
    assert set(table) == {algorithm.label for algorithm in installed()}, text
    assert all(cells == ["no", "-"] for cells in table.values()), text
    assert f"d_rtrl: braintrace.compile raised CompilationError: {REFUSAL}" in text
    assert "no algorithm runs" in text
