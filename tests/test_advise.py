"""The advisor's rows against braintrace itself: the learner's state allocated for real and its bytes
summed, BPTT through the unrolled model with ``jax.grad``, the online gradient through the learner."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import fixture

brainstate = pytest.importorskip("brainstate")
braintrace = pytest.importorskip("braintrace")
import jax.numpy as jnp  # noqa: E402
import online_referee as ref  # noqa: E402

from etrace_lint.verify.advise.run import AdviceSettings, advise_model  # noqa: E402

STEPS, BATCH = 3, 2


def _models():
    return ref.load(fixture("advise", "models.py"), "advise_models")


def _sequence(batch=BATCH):
    return jnp.asarray(np.random.default_rng(7).standard_normal((STEPS, batch, 3)).astype(np.float32))


def _real_learner(cls, options, batch):
    model = _models().RateRNN()
    brainstate.nn.init_all_states(model, batch_size=batch)
    learner = cls(model, **options)
    learner.compile_graph(jnp.ones((batch, 3)))
    return model, learner


@pytest.fixture(scope="module")
def rows():
    module = _models()
    model, inputs = module.etrace_target_rate_rnn()
    pristine = brainstate.graph.clone(model)  # the same weights and states, for the references
    xs = _sequence()
    settings = AdviceSettings(algorithms="d_rtrl,pp_prop,snap", steps=STEPS, batch_size=5,
                              inputs=lambda steps, batch, seed: xs)
    found = advise_model(model, inputs, target="models.py::etrace_target_rate_rnn", batch_size=BATCH,
                         settings=settings, loss=ref.mean_squared_output)
    return {row.label: row for row in found}, xs, pristine


@pytest.fixture(scope="module")
def bptt(rows):
    _, xs, pristine = rows
    return ref.unrolled_bptt(brainstate.graph.clone(pristine), xs)


@pytest.mark.parametrize("label, cls, options", [
    ("d_rtrl", "D_RTRL", {}), ("pp_prop", "pp_prop", {"decay_or_rank": 0.9}), ("snap", "SnAp", {})])
def test_trace_bytes_are_the_bytes_braintrace_allocates(rows, label, cls, options):
    found, _, _ = rows
    row = found[label]
    for batch in (1, 4, 5):
        model, learner = _real_learner(getattr(braintrace, cls), options, batch)
        assert row.trace_bytes_law.at(batch) == ref.allocated_bytes(model, learner), (label, batch)
    assert row.batch == 5 and row.trace_bytes == row.trace_bytes_law.at(5)


def test_snap_trace_grows_with_the_square_of_the_batch(rows):
    found, _, _ = rows
    assert found["snap"].trace_bytes_law.c2 > 0
    assert found["d_rtrl"].trace_bytes_law.c2 == 0 and found["d_rtrl"].trace_bytes_law.c1 > 0


@pytest.mark.parametrize("label, cls, options", [("d_rtrl", "D_RTRL", {}), ("snap", "SnAp", {})])
def test_fidelity_matches_bptt_and_the_online_gradient_of_braintrace(rows, bptt, label, cls, options):
    found, xs, pristine = rows
    row = found[label]
    model = brainstate.graph.clone(pristine)
    learner = getattr(braintrace, cls)(model, **options)
    learner.compile_graph(xs[0])
    online = ref.online(learner, xs)
    assert row.compiles and row.runs and row.error is None
    by_weight = {w.weight: w for w in row.weights}
    assert set(by_weight) == set(bptt)
    zero = sorted(name for name in bptt if not np.any(online.get(name, 0)) and np.any(bptt[name]))
    assert sorted(row.zero_gradient_weights) == zero
    for name, reference in bptt.items():
        got = online.get(name, np.zeros_like(reference))
        if name in zero:
            assert by_weight[name].verdict.advice_text == "no online gradient"
            continue
        assert by_weight[name].cosine == pytest.approx(ref.cosine(got, reference), abs=1e-4), name
        rel = ref.relative_error(got, reference)
        assert by_weight[name].relative_error == pytest.approx(rel, rel=1e-3, abs=1e-5), name


def test_xla_columns_are_xla_analysis_of_one_online_step(rows):
    found, xs, pristine = rows
    row = found["d_rtrl"]
    model, learner = _real_learner(braintrace.D_RTRL, {}, BATCH)
    online = ref.online_step(learner, xs[:1])
    forward = ref.forward_step(model, xs[0])
    assert row.xla_temp_bytes == online.memory_analysis().temp_size_in_bytes
    assert row.flops_ratio == pytest.approx(ref.flops(online) / ref.flops(forward), rel=1e-6)
    assert row.flops_ratio > 1


def test_the_recommendation_is_exact_where_one_is_exact(rows):
    found, _, _ = rows
    chosen = [row for row in found.values() if row.recommended]
    assert len(chosen) == 1
    if any(row.exact for row in found.values()):
        assert chosen[0].exact
