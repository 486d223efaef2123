"""The advisor's ``compiles`` column against ``braintrace.compile`` itself, algorithm by algorithm: on a model
with no hidden state (which braintrace.compile refuses under every algorithm: nothing to train online), on
real models from tests/real_models that it refuses, rejects or accepts, and through ``etrace-lint advise``."""

from __future__ import annotations

import functools
import json
import os

import numpy as np
import pytest
from helpers import REPO, fixture, run_cli

brainstate = pytest.importorskip("brainstate")
braintrace = pytest.importorskip("braintrace")
import advise_reference as ref  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from online_referee import TARGET_ATTRIBUTE  # noqa: E402

from etrace_lint.verify.advise.algorithms import installed  # noqa: E402
from etrace_lint.verify.advise.run import AdviceSettings, advise_model  # noqa: E402

NO_HIDDEN_STATE = (fixture("advise", "models.py"), "etrace_target_no_hidden_state")
REAL = os.path.join(REPO, "tests", "real_models")
MODELS = [
    NO_HIDDEN_STATE,
    (os.path.join(REAL, "short_term_recurrence.py"), "stateless_mlp"),  # refused: no hidden state at all
    (os.path.join(REAL, "sparch_lif.py"), "sparch_rlif_two_states"),  # compile_graph raises
    (os.path.join(REAL, "stacked_rnn.py"), "two_layer_gru"),  # accepted under every algorithm
]
REFUSAL = "No trainable weights are routed through ETP ops"


@functools.cache
def _factory(path: str, name: str):
    return getattr(ref.load(path, "compiles_" + os.path.basename(path)[:-3]), name)


def _at_batch(inputs: tuple, declared: int | None, batch: int | None) -> tuple:
    """The example inputs with ``batch`` rows, as the advisor measured them (None: unbatched)."""
    one = tuple(x[0] if declared is not None else x for x in inputs)
    return one if batch is None else tuple(jnp.broadcast_to(x, (batch, *np.shape(x))) for x in one)


def _braintrace_compiles(factory, declared: dict, algorithm, batch: int | None) -> tuple[bool, str]:
    """braintrace.compile's verdict on a fresh copy of the model, at the batch the advisor measured."""
    with brainstate.environ.context(**declared.get("environ", {})):
        model, inputs = factory()[:2]
        try:
            braintrace.compile(model, algorithm.constructor(), *_at_batch(inputs, declared.get("batch_size"), batch),
                               batch_size=batch, **algorithm.options)
        except Exception as exc:  # noqa: BLE001 - any refusal is "does not compile"
            return False, f"{type(exc).__name__}: {exc}"
    return True, ""


@pytest.mark.parametrize("path, name", MODELS, ids=[name for _, name in MODELS])
def test_compiles_is_what_braintrace_compile_answers_for_every_algorithm(path, name):
    factory = _factory(path, name)
    declared = getattr(factory, TARGET_ATTRIBUTE, {}) or {}
    with brainstate.environ.context(**declared.get("environ", {})):
        model, inputs = factory()[:2]
        rows = advise_model(model, inputs, target=name, batch_size=declared.get("batch_size"),
                            settings=AdviceSettings(steps=2))
    by_label = {row.label: row for row in rows}
    assert set(by_label) == {algorithm.label for algorithm in installed()}
    answers = {}
    for algorithm in installed():
        row = by_label[algorithm.label]
        compiles, error = _braintrace_compiles(factory, declared, algorithm, row.measured_batch)
        answers[algorithm.label] = compiles
        assert row.compiles == compiles, (algorithm.label, row.error, error)
        if not compiles:
            assert not row.runs and not row.recommended and row.error
            if REFUSAL in error:
                assert REFUSAL in row.error, row.error
    if (path, name) == NO_HIDDEN_STATE or name == "stateless_mlp":
        assert not any(answers.values())  # the model the advisor used to pass under every algorithm
    if name == "two_layer_gru":
        assert all(answers.values())


def test_advise_says_braintrace_compile_refuses_a_model_without_hidden_state(tmp_path):
    target = "tests/fixtures/advise/models.py::etrace_target_no_hidden_state"
    done = run_cli("advise", target, "--algorithms", "d_rtrl,uoro,snap", "--steps", "2", "--no-probe",
                   "--cache-dir", str(tmp_path / "cache"))
    lines = [line.split() for line in done.stdout.splitlines()]
    rows = {cells[0]: cells for cells in lines if cells and cells[0] in ("d_rtrl", "uoro", "snap")}
    assert set(rows) == {"d_rtrl", "uoro", "snap"}, done.stdout
    assert all(cells[1:3] == ["no", "-"] for cells in rows.values()), done.stdout
    assert "no algorithm runs" in done.stdout
    assert f"d_rtrl: CompilationError: {REFUSAL}" in done.stdout
    document = json.loads(run_cli("advise", target, "--algorithms", "d_rtrl,uoro,snap", "--steps", "2",
                                  "--no-probe", "--cache-dir", str(tmp_path / "cache"), "--output-format",
                                  "json").stdout)
    assert [row["compiles"] for row in document["advice"]] == [False, False, False]
