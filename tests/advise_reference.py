"""What tests/test_advise_compiles*.py compare the advisor's ``compiles`` column with: ``braintrace.compile``
on a fresh copy of a model from its factory, at the batch the advisor measured at (tests/test_advise_compiles.py
says why). Each verdict is reached once per session, for whichever test asks first: a fresh model compiled
again under the same algorithm at the same batch gets the same answer.

Both sides run under the referee's quick compiles (``online_referee.quick_compiles``): building a model and
compiling its learner trace it and evaluate small eager ops (the initialisers), which XLA compiles one shape at a
time, and whether a learner can be built never depends on how XLA optimises them. Measured on the corpus's first
20 models (Python 3.11): 20.1 s of CPU against 27.2 s.
"""


from __future__ import annotations

import functools
import os

import brainstate
import braintrace
import jax.numpy as jnp
import numpy as np
import online_referee as ref
from helpers import REPO
from online_referee import TARGET_ATTRIBUTE, declared_targets

from etrace_lint.analysis import braintrace_adapter as bt
from etrace_lint.verify.advise.algorithms import Algorithm, installed
from etrace_lint.verify.advise.fidelity import AdviceHarness
from etrace_lint.verify.settings import VerifySettings

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
def factory_of(path: str, name: str):
    return getattr(ref.load(path, "compiles_" + os.path.basename(path)[:-3]), name)


def declared(factory) -> dict:
    return getattr(factory, TARGET_ATTRIBUTE, {}) or {}


def _at_batch(inputs: tuple, declared: int | None, batch: int | None) -> tuple:
    """The example inputs with ``batch`` rows, as the advisor measured them (None: unbatched)."""
    one = tuple(x[0] if declared is not None else x for x in inputs)
    return one if batch is None else tuple(jnp.broadcast_to(x, (batch, *np.shape(x))) for x in one)


def braintrace_compiles(factory, algorithm: Algorithm, batch: int | None) -> tuple[bool, str]:
    """braintrace.compile's verdict on a fresh copy of the model, at the batch the advisor measured."""
    return _compiles(factory, algorithm.label, batch)


@functools.cache
def _compiles(factory, label: str, batch: int | None) -> tuple[bool, str]:
    [algorithm] = [each for each in installed() if each.label == label]
    options = declared(factory)
    with brainstate.environ.context(**options.get("environ", {})), bt.quiet([]), ref.quick_compiles():
        model, inputs = factory()[:2]
        try:
            braintrace.compile(model, algorithm.constructor(), *_at_batch(inputs, options.get("batch_size"), batch),
                               batch_size=batch, **algorithm.options)
        except Exception as exc:  # noqa: BLE001 - any refusal is "does not compile"
            return False, f"{type(exc).__name__}: {exc}"
    return True, ""


def advisor_verdicts(factory) -> tuple[int | None, dict[str, str | None]]:
    """The batch the advisor measures the model at, and its verdict per algorithm there (None: compiles): as
    ``advise_model`` makes them, after the layout is settled by one step of BPTT (evaluated, not compiled)."""
    options = declared(factory)
    algorithms = {algorithm.label: algorithm for algorithm in installed()}
    with brainstate.environ.context(**options.get("environ", {})), bt.quiet([]), ref.quick_compiles():
        model, inputs = factory()[:2]
        weights = bt.step_param_states(braintrace.extract_module_info(model, *inputs))
        harness = AdviceHarness(model, tuple(inputs), options.get("batch_size"), weights,
                                VerifySettings(steps=1, algorithms=tuple(algorithms)), algorithms=algorithms,
                                interpret=True)
        try:
            harness.settle([1], None)
            return harness.batch, {label: harness.compile_refusal(label) for label in algorithms}
        finally:
            harness.close()
