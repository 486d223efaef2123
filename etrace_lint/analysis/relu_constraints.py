"""The ReLUs the step applies to a weight's value in plain code, and the weight's values they leave dead.

A sign constraint written in the step (``w_pos = jax.nn.relu(self.w.value)``, ``jnp.maximum(self.w.value, 0.0)``,
``jnp.clip(self.w.value, 0.0)``, then ``x @ w_pos`` or ``braintrace.matmul(x, w_pos)``) is, in the step's jaxpr, a
``custom_jvp_call`` around a jit call named ``relu``, or a ``max`` of the weight's value and a constant floor. Its
derivative is zero at every value below the floor (JAX gives ``jax.nn.relu`` a slope of 0 at 0 as well, and
``max`` a slope of 0.5 where both sides are equal), so BPTT gives those values of the weight no gradient, and they
keep their starting value. A constraint is found where such an equation of the step (at its top level, outside any
loop, branch or custom-derivative function) reads a weight's value as it is, or reshaped, broadcast or cast; each
carries how many of the weight's values start where its slope is zero.

braintrace's compiler reads a weight through such a constraint to the ETP op whose weight operand it is, and its
online rule leaves the constraint's slope out: those ops are noted apart (``read_by_etp``).

The same constraint from above, a ceiling (``jnp.minimum(self.w.value, 0.25)``, ``jnp.clip(self.w.value, max=0.25)``,
``jnp.clip(self.w.value, -0.25, 0.25)``), is a ``min`` of the weight's value, or of such a ReLU of it, and a constant:
its slope is zero at every value above the ceiling, and each ceiling carries how many of the weight's values start
there (``clip_ceilings``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import jaxpr_view as jv


@dataclass(frozen=True)
class ReluConstraint:
    """A ReLU applied to a weight's value in the step's plain code, and the values of the weight it leaves with a
    zero slope before the first step."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the relu or max equation: where a finding about it lands
    function: str  # the function as the user called it: 'jax.nn.relu', 'jnp.maximum', 'jnp.clip'
    floor: float  # the constant the weight's values are kept at or above (0 for a relu)
    dead_values: int  # the weight's values before the first step where the constraint's slope is zero
    values: int  # all the weight's values
    # the ETP ops whose weight operand is the constrained value: braintrace's online rule reads the weight through
    # the constraint there and leaves its slope out (empty: the constrained value is used by plain ops only)
    read_by_etp: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through the constraint


@dataclass(frozen=True)
class ClipCeiling:
    """A ceiling the step's plain code clips a weight's value to, and the values of the weight that start above it,
    where the clip's slope is zero before the first step."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the min equation: where a finding about it lands
    function: str  # the function as the user called it: 'jnp.minimum', 'jnp.clip'
    ceiling: float  # the constant the weight's values are kept at or below
    floor: float | None  # the floor the same clip keeps them at or above first (ETL223's), None without one
    clipped_values: int  # the weight's values before the first step above the ceiling, where the slope is zero
    values: int  # all the weight's values
    # the ETP ops whose weight operand is the clipped value: braintrace's online rule reads the weight through the
    # clip there and leaves its slope out (empty: the clipped value is used by plain ops only)
    read_by_etp: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through the clip


def _is_relu_call(eqn: jv.JaxprEqn) -> bool:
    """Whether ``eqn`` is a call of ``jax.nn.relu``: a ``custom_jvp_call`` around a jit call named ``relu``."""
    if jv.primitive_name(eqn) != "custom_jvp_call":
        return False
    return any(site.primitive in ("jit", "pjit") and str(site.eqn.params.get("name", "")) == "relu"
               for body in jv.sub_jaxprs(eqn) for site in jv.walk(body))


def _dead_values(function: str, floor: float, value: npt.NDArray[np.generic]) -> int:
    """How many of ``value``'s entries the constraint's derivative is zero at: below the floor, and, for
    ``jax.nn.relu``, at it too (JAX's ``max`` gives each side half the slope where both are equal)."""
    array = np.asarray(value, dtype=np.float64)
    dead = array <= floor if function == "jax.nn.relu" else array < floor
    return int(np.count_nonzero(dead))


def _relu_of(site: jv.EqnSite, producer: Callable[[jv.Atom], jv.EqnSite | None],
             jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
             weight_invars: Mapping[jv.Var, StatePath]) -> tuple[str, float, jv.Var] | None:
    """The function as the user called it, its floor and the weight input var whose value it constrains, where
    ``site`` is a ReLU of a weight's value (``jax.nn.relu``, or a ``max`` of it and a constant); None otherwise."""
    operands = jv.invars(site.eqn)
    if _is_relu_call(site.eqn):
        return ("jax.nn.relu", 0.0, jv.value_origin(operands[0], producer)) if len(operands) == 1 else None
    if site.primitive != "max" or len(site.eqn.invars) != 2:
        return None
    for this, other in ((0, 1), (1, 0)):
        atom = site.eqn.invars[this]
        if not jv.is_var(atom) or jv.value_origin(atom, producer) not in weight_invars:
            continue
        floor = jv.constant_number(site.eqn.invars[other], producer)
        if floor is None:
            return None
        calls = [str(call.params.get("name", "")) for call in jit_parents(site.eqn)]
        return ("jnp.clip" if "clip" in calls else "jnp.maximum"), floor, jv.value_origin(atom, producer)
    return None


def _under_ceiling(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> jv.Var:
    """The var whose values ``var`` holds, back through a reshape, a broadcast or a cast, and through a ``min``
    against a constant (the ceiling of ``jnp.clip(w, lo, hi)``, applied after its floor): an ETP op that reads a
    two-sided clip of a weight reads the floor's output through it."""
    origin = jv.value_origin(var, producer)
    site = producer(origin)
    if site is None or site.primitive != "min" or len(site.eqn.invars) != 2:
        return origin
    for this, other in ((0, 1), (1, 0)):
        atom = site.eqn.invars[this]
        if jv.is_var(atom) and jv.constant_number(site.eqn.invars[other], producer) is not None:
            return jv.value_origin(atom, producer)
    return origin


def relu_constraints(sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                     jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
                     weight_invars: Mapping[jv.Var, StatePath],
                     weight_values: Mapping[jv.Var, npt.NDArray[np.generic]],
                     connected_ops: Mapping[StatePath, tuple[jv.EqnSite, ...]]) -> list[ReluConstraint]:
    """Each ReLU of a floating weight's value at the step's top level, in the step's order.

    ``sites``: every equation of the step, in the step's order; ``producer``: the equation that computes a var;
    ``jit_parents``: the jit calls the compiler inlined around an equation (the locator's); ``weight_invars``: each
    weight input var -> its ParamState's path; ``weight_values``: each weight input var -> its value before the first
    step; ``connected_ops``: each weight -> the ETP ops braintrace's compiler connects to it."""
    found: list[ReluConstraint] = []
    for site in sites:
        relu = None if site.parents else _relu_of(site, producer, jit_parents, weight_invars)
        if relu is None:
            continue
        function, floor, weight_var = relu
        weight, value = weight_invars.get(weight_var), weight_values.get(weight_var)
        if weight is None or value is None or not np.issubdtype(value.dtype, np.floating):
            continue
        constrained = set(jv.outvars(site.eqn))
        read_by_etp = tuple(op for op in connected_ops.get(weight, ())
                            if any(_under_ceiling(var, producer) in constrained for var in jv.invars(op.eqn)))
        found.append(ReluConstraint(weight, site, function, floor, _dead_values(function, floor, value),
                                    int(np.size(value)), read_by_etp))
    return found


def _ceiling_of(site: jv.EqnSite, producer: Callable[[jv.Atom], jv.EqnSite | None],
                jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
                weight_invars: Mapping[jv.Var, StatePath]) -> tuple[str, float, float | None, jv.Var] | None:
    """The function as the user called it, its ceiling, the floor a ReLU of the weight applies before it (``jnp.clip``
    with both bounds: a ``max`` then a ``min``; None without one) and the weight input var whose value it clips,
    where ``site`` is a ``min`` of a weight's value, or of a ReLU of it, and a constant; None otherwise."""
    if site.primitive != "min" or len(site.eqn.invars) != 2:
        return None
    for this, other in ((0, 1), (1, 0)):
        atom = site.eqn.invars[this]
        ceiling = jv.constant_number(site.eqn.invars[other], producer)
        if not jv.is_var(atom) or ceiling is None:
            continue
        origin, floor = jv.value_origin(atom, producer), None
        if origin not in weight_invars:
            inner = producer(origin)
            relu = None if inner is None else _relu_of(inner, producer, jit_parents, weight_invars)
            if relu is None:
                continue
            _, floor, origin = relu
        calls = [str(call.params.get("name", "")) for call in jit_parents(site.eqn)]
        return ("jnp.clip" if "clip" in calls else "jnp.minimum"), ceiling, floor, origin
    return None


def _clipped_values(ceiling: float, floor: float | None, value: npt.NDArray[np.generic]) -> int:
    """How many of ``value``'s entries start above the ceiling, once the floor has raised them: there the ``min``'s
    derivative is zero (JAX gives each side half the slope where both are equal, so an entry at the ceiling
    learns). The ceiling is compared in the weight's own dtype, as the step compares it."""
    array = np.asarray(value, dtype=np.float64)
    if floor is not None:
        array = np.maximum(array, floor)
    bound = float(np.asarray(ceiling).astype(value.dtype))
    return int(np.count_nonzero(array > bound))


def clip_ceilings(sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                  jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
                  weight_invars: Mapping[jv.Var, StatePath],
                  weight_values: Mapping[jv.Var, npt.NDArray[np.generic]],
                  connected_ops: Mapping[StatePath, tuple[jv.EqnSite, ...]]) -> list[ClipCeiling]:
    """Each ceiling a floating weight's value is clipped to at the step's top level, in the step's order.

    The arguments are :func:`relu_constraints`'s."""
    found: list[ClipCeiling] = []
    for site in sites:
        clip = None if site.parents else _ceiling_of(site, producer, jit_parents, weight_invars)
        if clip is None:
            continue
        function, ceiling, floor, weight_var = clip
        weight, value = weight_invars.get(weight_var), weight_values.get(weight_var)
        if weight is None or value is None or not np.issubdtype(value.dtype, np.floating):
            continue
        clipped = set(jv.outvars(site.eqn))
        read_by_etp = tuple(op for op in connected_ops.get(weight, ())
                            if any(jv.value_origin(var, producer) in clipped for var in jv.invars(op.eqn)))
        found.append(ClipCeiling(weight, site, function, ceiling, floor, _clipped_values(ceiling, floor, value),
                                 int(np.size(value)), read_by_etp))
    return found
