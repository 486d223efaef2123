"""The step's softmaxes, as JAX writes them into the jaxpr, and the weights that reach the loss only through one over
an axis of one unit.

``jax.nn.softmax(y, axis=a)`` is, in the step's jaxpr, ``e = exp(y - stop_gradient(max(y, a)))`` divided by
``sum(e, a)`` broadcast back (the same inside the ``custom_jvp_call`` JAX writes where ``jax_softmax_custom_jvp``
is set); ``jax.nn.log_softmax(y, axis=a)`` is ``s - log(sum(exp(s), a))`` with ``s = y - stop_gradient(max(y, a))``.
Over axes whose sizes multiply to 1 the sum is the exponential itself: the softmax is exactly 1 and the log_softmax
exactly 0 whatever ``y``, and their derivative is exactly zero, so no gradient passes back through them, online or
by BPTT. A weight whose every float path to the step's output, at this step or through the states it carries to a
later one, crosses such a softmax gets no gradient from BPTT; one with another path around it learns there. An ETP
op whose weight operand is such a softmax of the weight is one braintrace's compiler reads the weight through, as
:mod:`.gradient_cuts` says: such ops are noted apart (``read_through``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .gradient_cuts import loss_ends
from .step_flow import CarriedState, StepFlow


@dataclass(frozen=True)
class Softmax:
    """A ``jax.nn.softmax`` or ``jax.nn.log_softmax`` of the step, found by the equations JAX writes for it."""

    site: jv.EqnSite  # the equation that makes its value: the division by the sum (a log_softmax's subtraction)
    log: bool  # a jax.nn.log_softmax, whose value is the log of a softmax's
    shape: tuple[int, ...]  # the shape of the array it normalises, which its value has too
    axes: tuple[int, ...]  # the axes it normalises over, counted from 0, as its reduce_sum names them
    size: int  # how many values it normalises together: the product of ``shape`` over ``axes``; 1 makes it constant
    # the value it normalises, in the site's scope: the exponential's operand, less the stop_gradient max JAX
    # subtracts from it first (the var that reduce_max reads)
    operand: jv.Var


@dataclass(frozen=True)
class OneUnitSoftmaxCut:
    """A weight whose every float path to the step's output crosses a softmax over an axis of one unit: it gets no
    gradient from BPTT."""

    weight: StatePath  # the ParamState's path
    softmax: Softmax  # the first such softmax its value, or its carried states' values, meets
    softmax_count: int  # how many such softmaxes it meets first on those paths: this one and the others
    hidden: tuple[StatePath, ...]  # the hidden states it reaches whose values reach the output only through them
    # braintrace's online rule ignores the cut there and gives the weight a gradient BPTT's does not have (empty:
    # no gradient reaches the weight, online or by BPTT); GradientWalk.read_through finds them
    read_through: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through the softmax and pass a gradient on


def _producer_of(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None], primitive: str) -> jv.EqnSite | None:
    """The equation that computes ``var`` if its primitive is ``primitive``."""
    site = producer(var)
    return site if site is not None and site.primitive == primitive else None


def _summed_exp(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> tuple[jv.EqnSite, jv.EqnSite] | None:
    """The exponential whose sum ``var`` is, broadcast back, and that sum's reduce_sum; None where it is not one."""
    summed = _producer_of(jv.value_origin(var, producer), producer, "reduce_sum")
    operands = jv.invars(summed.eqn) if summed is not None else []
    exponential = _producer_of(operands[0], producer, "exp") if operands else None
    if summed is None or exponential is None or not jv.invars(exponential.eqn):
        return None
    return exponential, summed


def _unshifted(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> jv.Var:
    """The value whose maximum ``var`` is less of (``y - stop_gradient(max(y))``, JAX's guard against overflow), or
    ``var`` itself where it is not one."""
    shifted = _producer_of(var, producer, "sub")
    if shifted is None or len(jv.invars(shifted.eqn)) != 2:
        return var
    value, bound = jv.invars(shifted.eqn)
    for _ in range(8):  # back through a broadcast, a stop_gradient and a max with the initial value to the reduce_max
        site = producer(jv.value_origin(bound, producer))
        if site is None:
            return var
        if site.primitive == "reduce_max":
            return value if jv.invars(site.eqn)[:1] == [value] else var
        maxima = [v for v in jv.invars(site.eqn)
                  if (made := producer(v)) is not None and made.primitive == "reduce_max"]
        if site.primitive == "stop_gradient" and jv.invars(site.eqn):
            bound = jv.invars(site.eqn)[0]
        elif site.primitive == "max" and len(maxima) == 1:
            bound = maxima[0]
        else:
            return var
    return var


def softmaxes(sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None]) -> list[Softmax]:
    """Each softmax and log_softmax of the step, in the step's order.

    ``sites``: every equation of the step, nested bodies included; ``producer``: the equation that computes a var
    (the locator's)."""
    found = []
    for site in sites:
        primitive, operands = site.primitive, site.eqn.invars
        if primitive not in ("div", "sub") or len(operands) != 2:
            continue
        first, second = operands
        if not jv.is_var(first) or not jv.is_var(second):
            continue
        if primitive == "sub":  # s - log(sum(exp(s))): the sum is the log's operand
            logged = _producer_of(second, producer, "log")
            if logged is None or not jv.invars(logged.eqn):
                continue
            second = jv.invars(logged.eqn)[0]
        summed = _summed_exp(second, producer)
        if summed is None:
            continue
        exp_site, reduce_sum = summed
        exponential = jv.outvars(exp_site.eqn)[0]
        # a softmax divides the exponential itself; a log_softmax subtracts the log from the exponential's operand
        if first is not (exponential if primitive == "div" else jv.invars(exp_site.eqn)[0]):
            continue
        shape = jv.aval_shape(exponential)
        axes = tuple(int(axis) for axis in reduce_sum.eqn.params.get("axes", ()))
        operand = _unshifted(jv.invars(exp_site.eqn)[0], producer)
        found.append(Softmax(site, primitive == "sub", shape, axes, math.prod(shape[axis] for axis in axes), operand))
    return found


def one_unit_softmax_cuts(flow: StepFlow, found: Sequence[Softmax], weight_vars: Mapping[StatePath, list[jv.Var]],
                          carried: Mapping[StatePath, CarriedState], output_vars: Sequence[jv.Var],
                          connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[OneUnitSoftmaxCut]:
    """The weights that get no gradient from BPTT because a softmax over one unit stands on their every way to the
    output.

    ``flow``: the step's data flow; ``found``: its softmaxes; ``weight_vars``: ParamState path -> its input vars;
    ``carried``: each state the step carries to the next (hidden states and untraced ones); ``output_vars``: the
    step's return value; ``connected``: ParamState path -> the ETP ops the compiler connected to it
    (``gradient_cuts.connected_ops``)."""
    # a loss is a function of the float outputs
    outputs = loss_ends(output_vars)
    ones = [softmax for softmax in found if softmax.size == 1]
    if not outputs or not ones:
        return []
    walk = flow.gradient_walk([flow.outputs_of(softmax.site) for softmax in ones], outputs, carried)
    return [OneUnitSoftmaxCut(weight.weight, ones[weight.cuts[0]], len(weight.cuts),
                              tuple(path for path in weight.states if carried[path].hidden),
                              walk.read_through(connected.get(weight.weight, ())))
            for weight in walk.starved_weights(weight_vars)]
