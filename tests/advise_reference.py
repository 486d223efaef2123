"""braintrace itself, through its public API, as the reference the advisor's rows are checked against: the
learner's state allocated for real and its bytes summed, BPTT through the model unrolled in Python with
``jax.grad``, the online gradient through the learner one step per call, XLA's analysis of jitted steps."""

from __future__ import annotations

import importlib.util

import brainstate
import jax
import jax.numpy as jnp
import numpy as np

from etrace_lint.core.naming import display_name


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def squared_loss(out):
    return jnp.mean(out ** 2)


def allocated_bytes(model, learner) -> int:
    """Bytes of every state the learner holds that the model does not, allocated for real."""
    own = {id(st) for st in brainstate.graph.states(model).values()}
    total = 0
    for st in brainstate.graph.states(learner).values():
        if id(st) in own:
            continue
        for leaf in jax.tree.leaves(st.value):
            leaf = jnp.asarray(leaf)
            total += jax.random.key_data(leaf).nbytes if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key) \
                else leaf.nbytes
    return total


def named(grads) -> dict:
    flat = {}
    for path, tree in grads.items():
        for leaf_path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
            flat[display_name(tuple(path)) + jax.tree_util.keystr(leaf_path)] = np.asarray(leaf, np.float64)
    return flat


def bptt(model, xs, loss=squared_loss) -> dict:
    """Exact gradient of the summed loss over the sequence; the model's states are as they were afterwards."""
    weights = brainstate.graph.states(model).filter(brainstate.ParamState)
    start = {p: st.value for p, st in brainstate.graph.states(model).items()}

    def total():
        return sum(loss(model(xs[t])) for t in range(len(xs)))  # unrolled in Python

    grads = brainstate.transform.grad(total, weights)()
    for p, st in brainstate.graph.states(model).items():
        st.value = start[p]
    return named(grads)


def online(learner, xs, loss=squared_loss) -> dict:
    """The learner's online gradient, one jitted ``etrace_grad`` call per step, summed as training applies it."""
    step = brainstate.transform.jit(lambda x: learner.etrace_grad(x, step_fn=lambda x: loss(learner(x)),
                                                                  reduction="sum", loss_output="scalar"))
    total = {}
    for t in range(len(xs)):
        for name, value in named(step(xs[t:t + 1])).items():
            total[name] = total.get(name, 0) + value
    return total


def cosine(a, b) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def relative_error(got, reference) -> float:
    return float(np.linalg.norm(np.ravel(got) - np.ravel(reference)) / np.linalg.norm(np.ravel(reference)))


def flops(compiled) -> float:
    costs = compiled.cost_analysis()
    return (costs[0] if isinstance(costs, list) else costs)["flops"]


def online_step(learner, x, loss=squared_loss):
    """One jitted online step, compiled: what the advisor's XLA columns analyse."""
    def step(x):
        return learner.etrace_grad(x, step_fn=lambda x: loss(learner(x)), reduction="sum", loss_output="scalar",
                                   return_value=True)
    return brainstate.transform.jit(step).lower(x).compile()


def forward_step(model, x, loss=squared_loss):
    return brainstate.transform.jit(lambda x: loss(model(x))).lower(x).compile()
