"""The slopes of the step's gates: a sigmoid or tanh whose input adds a weight's value (a gate's bias), with the
activation's slope where the biases start it.

``f = jax.nn.sigmoid(braintrace.matmul(x, self.w_f.value) + self.b_f.value)`` is an LSTM's forget gate written by
hand; GRU's update gate and a tanh candidate take the same form. The gradient of everything that reaches the
activation's input through that sum (the bias, the weights of the other terms) is multiplied by the activation's
slope there, online and by BPTT alike. A gate is found where a ``logistic`` or ``tanh`` equation of the step (at its
top level) has as its input a sum (``add``, ``sub``: a weight's value alone, ``jax.nn.sigmoid(self.tau.value)``, is
none) with a term that is a weight's value as it is, or reshaped, broadcast or cast, or made by
``braintrace.element_wise`` from it. Each carries the biases' values summed (with the constants of the sum) before
the first step, as the target's factory left them, and the slope of the activation at each of them: as JAX computes
it in the input's dtype (on CPU, float32 makes a sigmoid of 16.65 or more, and a tanh of 8 or more in magnitude,
exactly 1 or -1, and its slope exactly 0) and in float64. The other terms (``x @ w``, ``h @ u``) are left out: they
depend on the inputs, and a usual initialisation centres them at 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv

# the saturating activations, by primitive: the function as the user called it
_ACTIVATIONS = {"logistic": "jax.nn.sigmoid", "tanh": "jnp.tanh"}
# the sums a gate's input is made of, by primitive: the sign each operand enters with
_SUMS: dict[str, tuple[int, int]] = {"add": (1, 1), "add_any": (1, 1), "sub": (1, -1)}
_LIMIT = 32  # the equations a sum is followed back through, at most


@dataclass(frozen=True)
class GateSlope:
    """A sigmoid or tanh of the step whose input adds a weight's value, with its slope where the biases start it."""

    site: jv.EqnSite  # the logistic or tanh equation: where a finding about it lands
    activation: str  # the function as the user called it: 'jax.nn.sigmoid', 'jnp.tanh'
    biases: tuple[StatePath, ...]  # the weights whose values the sum adds, in the step's order
    upstream: tuple[StatePath, ...]  # the other weights whose values reach the activation's input at this step
    starts: tuple[float, ...]  # the biases' values summed, with the sum's constants, before the first step, flattened
    slopes: tuple[float, ...]  # the activation's slope at each of those values, as JAX computes it in `dtype`
    exact_slopes: tuple[float, ...]  # the same slopes computed in float64: what `dtype` rounds them from
    dtype: str  # the dtype of the activation's input ('float32')


def _exact_slopes(activation: str, starts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The activation's slope at ``starts`` in float64, written so that no large value overflows."""
    if activation == "jax.nn.sigmoid":
        e = np.exp(-np.abs(starts))
        return np.asarray(e / (1.0 + e) ** 2, dtype=np.float64)
    e = np.exp(-2.0 * np.abs(starts))
    return np.asarray(4.0 * e / (1.0 + e) ** 2, dtype=np.float64)


def _slopes(activation: str, starts: npt.NDArray[np.float64], dtype: str) -> npt.NDArray[np.float64]:
    """The activation's slope at ``starts`` as JAX's own derivative gives it in ``dtype``, as the step computes it."""
    function = jax.nn.sigmoid if activation == "jax.nn.sigmoid" else jnp.tanh
    values = jnp.asarray(starts.ravel(), dtype=dtype)
    return np.asarray(jax.vmap(jax.grad(function))(values), dtype=np.float64)


def _terms(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None], weight_invars: Mapping[jv.Var, StatePath],
           weight_values: Mapping[jv.Var, npt.NDArray[np.generic]]
           ) -> tuple[list[tuple[StatePath, npt.NDArray[np.float64]]], float] | None:
    """The weights' values a sum adds, each with the sign it enters with, and the constants it adds; None where a
    weight's value is unknown (a model captured inside a trace)."""
    biases: list[tuple[StatePath, npt.NDArray[np.float64]]] = []
    constant = 0.0
    stack: list[tuple[jv.Atom, int]] = [(var, 1)]
    for _ in range(_LIMIT):
        if not stack:
            break
        atom, sign = stack.pop()
        number = jv.literal_number(atom)
        if number is not None:
            constant += sign * number
            continue
        if not jv.is_var(atom):
            continue
        origin = jv.value_origin(atom, producer)
        if origin in weight_invars:
            value = weight_values.get(origin)
            if value is None:
                return None
            biases.append((weight_invars[origin], sign * np.asarray(value, dtype=np.float64)))
            continue
        site = producer(origin)
        if site is None or site.parents:
            continue
        signs = _SUMS.get(site.primitive)
        if signs is not None and len(site.eqn.invars) == 2:
            # pushed in reverse, so that the terms are met in the order the user wrote them
            stack.extend(reversed(list(zip(site.eqn.invars, signs))))
            continue
        operand = bt.weight_fn_operand(site.eqn)
        if operand is None or len(jv.invars(site.eqn)) <= operand:
            continue
        weight_origin = jv.value_origin(jv.invars(site.eqn)[operand], producer)
        weight_value = weight_values.get(weight_origin)
        if weight_origin not in weight_invars or weight_value is None:
            continue
        made = bt.elementwise_factor(site.eqn, weight_value)  # braintrace.element_wise's value; None for a matmul
        if made is not None:
            biases.append((weight_invars[weight_origin], sign * np.asarray(made, dtype=np.float64)))
    return biases, constant


def gate_slopes(sites: list[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                weight_invars: Mapping[jv.Var, StatePath],
                weight_values: Mapping[jv.Var, npt.NDArray[np.generic]],
                weight_provenance: Mapping[jv.Var, frozenset[StatePath]]) -> list[GateSlope]:
    """Each sigmoid or tanh of the step whose input adds a weight's value, in the step's order.

    ``sites``: the step's equations; ``producer``: the equation that computes a var (the locator's);
    ``weight_invars``: each weight input var -> its ParamState's path; ``weight_values``: each weight input var ->
    its value now, before the first step; ``weight_provenance``: each top-level var -> the weights whose values
    flow into it."""
    order = {path: index for index, path in enumerate(dict.fromkeys(weight_invars.values()))}
    found: list[GateSlope] = []
    for site in sites:
        activation = _ACTIVATIONS.get(site.primitive)
        operands = jv.invars(site.eqn)
        if activation is None or site.parents or len(operands) != 1:
            continue
        dtype = jv.aval_dtype(operands[0])
        if not jnp.issubdtype(dtype, jnp.floating):
            continue
        made_by = producer(jv.value_origin(operands[0], producer))
        if made_by is None or made_by.primitive not in _SUMS:  # a weight's value alone is no gate: ETL219's kind
            continue
        terms = _terms(operands[0], producer, weight_invars, weight_values)
        if not terms or not terms[0]:
            continue
        biases, constant = terms
        try:
            total = np.asarray(sum((value for _, value in biases), np.float64(constant)), dtype=np.float64)
        except ValueError:  # values that do not broadcast together as NumPy lays them out: no one start per unit
            continue
        paths = tuple(dict.fromkeys(path for path, _ in biases))
        upstream = tuple(sorted(weight_provenance.get(operands[0], frozenset()) - set(paths),
                                key=lambda path: order.get(path, len(order))))
        starts = total.ravel()
        found.append(GateSlope(site, activation, paths, upstream, tuple(float(s) for s in starts),
                               tuple(float(s) for s in _slopes(activation, starts, dtype)),
                               tuple(float(s) for s in _exact_slopes(activation, starts)), dtype))
    return found
