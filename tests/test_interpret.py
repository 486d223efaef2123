"""The probe's programs evaluated with NumPy give what XLA's compiled programs give: each equation
kind the interpreter has a rule for, the control flow it enters, and the primitives it hands back to JAX."""

from __future__ import annotations

import brainstate
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etrace_lint.verify.interpret import evaluate, interpreted


def _both(function, *args):
    """(XLA's result, the interpreter's result) as flat lists of NumPy arrays."""
    compiled = jax.tree.leaves(jax.jit(function)(*args))
    closed = jax.make_jaxpr(function)(*args)
    flat = jax.tree.leaves(args)
    interpreted_values = evaluate(closed.jaxpr, list(closed.consts), flat)
    return [np.asarray(v) for v in compiled], [np.asarray(v) for v in interpreted_values]


def _agree(function, *args, rtol=1e-5, atol=1e-6):
    compiled, interpreted_values = _both(function, *args)
    assert len(compiled) == len(interpreted_values)
    for xla, ours in zip(compiled, interpreted_values):
        assert ours.dtype == xla.dtype and ours.shape == xla.shape, (ours.dtype, xla.dtype, ours.shape, xla.shape)
        np.testing.assert_allclose(ours, xla, rtol=rtol, atol=atol)


X = jnp.linspace(-2.0, 2.0, 12, dtype=jnp.float32).reshape(3, 4)
Y = jnp.linspace(0.5, 3.0, 12, dtype=jnp.float32).reshape(3, 4)
INTS = jnp.arange(-5, 7, dtype=jnp.int32).reshape(3, 4)

ELEMENTWISE = {
    "tanh, logistic, exp, log1p": lambda x, y: jnp.tanh(x) + jax.nn.sigmoid(x) * jnp.exp(-y) + jnp.log1p(y),
    "sqrt, rsqrt, pow, integer powers": lambda x, y: jnp.sqrt(y) + jax.lax.rsqrt(y) + y ** 1.7 + x ** 3 + y ** -2,
    "erf, abs, sign, round, floor": lambda x, y: jax.scipy.special.erf(x) + jnp.abs(x) * jnp.sign(x)
    + jnp.round(x * 2.5) + jnp.floor(x),
    "select, clamp, min, max": lambda x, y: jnp.where(x > 0, x, y) + jnp.clip(x, -1, 1) + jnp.maximum(x, y),
    "nan and inf as XLA gives them": lambda x, y: jnp.log(x) + 1.0 / x + jnp.sqrt(x),
    "gelu, silu, relu (custom JVP)": lambda x, y: jax.nn.gelu(x) + jax.nn.silu(x) + jax.nn.relu(x),
    "softmax and logsumexp": lambda x, y: jax.nn.softmax(x, axis=-1) + jax.nn.logsumexp(y, axis=0),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_programs_agree_with_xla(name):
    _agree(ELEMENTWISE[name], X, Y)


def test_integer_arithmetic_rounds_as_xla_does():
    _agree(lambda i: (i // 3, i % 3, jax.lax.div(i, 3), jax.lax.rem(i, 3), i.astype(jnp.float32) / 4), INTS)
    _agree(lambda x: (x * 2.7).astype(jnp.int32), X)


def test_shapes_reductions_and_indexing_agree_with_xla():
    _agree(lambda x: (x.T @ x, jnp.einsum("ij,kj->ik", x, x), x.sum(0), x.max(1), x.argmax(1), jnp.cumsum(x, 1),
                      jnp.cumsum(x[::-1], 0), x.reshape(4, 3)[None, :, 1:], jnp.concatenate([x, x], 1),
                      jnp.pad(x, ((1, 2), (0, 1))), jnp.flip(x, 1), jnp.broadcast_to(x[:, None], (3, 2, 4))), X)
    batched = jnp.arange(24, dtype=jnp.float32).reshape(2, 3, 4)
    _agree(lambda a: jnp.einsum("bij,bkj->bik", a, a) + jnp.matmul(a, jnp.swapaxes(a, 1, 2)), batched)
    _agree(lambda x, i: (jax.lax.dynamic_slice(x, (i, i), (2, 2)), jax.lax.dynamic_update_slice(x, x[:2, :2], (i, i))),
           X, jnp.int32(7))  # a start past the end is clamped, as XLA clamps it
    _agree(lambda x: jax.lax.pad(x, 0.0, ((1, -1, 1), (-1, 2, 0))), X)


def test_control_flow_is_entered_and_agrees_with_xla():
    def rnn(w, xs):
        def body(h, x):
            h = jnp.tanh(h @ w + x)
            return h, (h ** 2).sum()
        return jax.lax.scan(body, jnp.zeros(4), xs)

    def settle(x):
        return jax.lax.while_loop(lambda v: v[1] < 5, lambda v: (jnp.cos(v[0]), v[1] + 1), (x, 0))

    def branch(x):
        return jax.lax.cond(x.sum() > 0, lambda z: z * 2, lambda z: -z, x), jax.lax.switch(7, [jnp.sin, jnp.cos], x)

    w = jnp.eye(4, dtype=jnp.float32) * 0.5
    _agree(rnn, w, X)
    _agree(lambda w, xs: jax.lax.scan(lambda c, x: (c + x, c * x), jnp.ones(4), xs, reverse=True), w, X)
    _agree(settle, X)
    _agree(branch, X)
    _agree(jax.grad(lambda w, xs: rnn(w, xs)[1].sum()), w, X)  # BPTT: a reverse scan of the transposed body
    _agree(jax.grad(lambda w, xs: jax.checkpoint(lambda v: rnn(v, xs)[1].sum())(w)), w, X)


def test_a_primitive_without_a_rule_is_run_by_jax():
    kernel = jnp.ones((2, 1, 3), dtype=jnp.float32)
    _agree(lambda x: jax.lax.conv_general_dilated(x[None], kernel, (1,), "SAME"), X[:1])
    _agree(lambda x: (jnp.sort(x, axis=1), x[jnp.array([2, 0])], x.at[jnp.array([0, 0])].add(1.0)), X)
    _agree(lambda key: jax.random.normal(key, (3,)), jax.random.PRNGKey(3))
    _agree(lambda key, x: x + jax.random.uniform(jax.random.key(1), x.shape), jax.random.PRNGKey(0), X)
    # new-style keys carried and scanned out by a scan: they stay JAX's
    _agree(lambda x: jax.random.key_data(jax.lax.scan(lambda k, _: (jax.random.split(k)[0], k), jax.random.key(2),
                                                      None, length=3)[1]), X)


@settings(max_examples=25, deadline=None)
# subnormal floats left out: XLA's CPU flushes them to zero, NumPy keeps them (interpret.py says so)
@given(st.lists(st.floats(-30, 30, allow_nan=False, allow_subnormal=False, width=32), min_size=6, max_size=6),
       st.sampled_from(sorted(ELEMENTWISE)))
def test_elementwise_programs_agree_with_xla_on_drawn_inputs(values, name):
    x = jnp.asarray(values, dtype=jnp.float32).reshape(2, 3)
    _agree(ELEMENTWISE[name], x, jnp.abs(x) + 0.25, rtol=2e-5, atol=1e-5)


def test_a_stateful_function_reads_and_writes_its_states_as_jit_does():
    class Counter(brainstate.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = brainstate.ParamState(jnp.full((3,), 0.5))
            self.h = brainstate.HiddenState(jnp.zeros(3))

        def update(self, x):
            self.h.value = jnp.tanh(self.h.value + self.w.value * x)
            return self.h.value.sum()

    results = []
    for stage in (brainstate.transform.jit, interpreted):
        model = Counter()
        step = stage(lambda x: model(x))
        outs = [float(step(jnp.full((3,), float(t)))) for t in range(3)]
        results.append((outs, np.asarray(model.h.value)))
    (xla_outs, xla_h), (our_outs, our_h) = results
    np.testing.assert_allclose(our_outs, xla_outs, rtol=1e-6)
    np.testing.assert_allclose(our_h, xla_h, rtol=1e-6)
