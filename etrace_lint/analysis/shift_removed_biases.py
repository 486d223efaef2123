"""The step's operations that remove a constant shift of their input along some axes, and the weights added to a
value uniformly along those axes that reach the loss only through them: biases that change nothing the loss sees.

``jax.nn.softmax(y + c, axis=a)`` is ``jax.nn.softmax(y, axis=a)`` for any ``c`` constant along ``a`` (a
``jax.nn.log_softmax`` likewise); ``(y + c) - (y + c).mean(a, keepdims=True)`` is ``y - y.mean(a, keepdims=True)``
(a layer norm's centring), and a variance over ``a``, written ``E[y^2] - E[y]^2`` as brainstate's ``LayerNorm``
does or ``E[(y - E[y])^2]``, does not change either. Such an operation is a *shift remover*. A ParamState ``b`` added
to (or subtracted from) ``y`` uniformly along ``a`` (a scalar, or a bias of size 1 along ``a``, broadcast there)
whose sum goes only into shift removers over axes along which it is uniform gets a zero gradient: ``b``'s gradient
is the sum, along ``a``, of the sum's gradient, and a shift remover's derivative sums to zero along ``a``. BPTT's
is zero up to float32 rounding (a softmax's division, a variance's difference of two means leave about 1e-7 of
the other weights' gradients), and so is braintrace's online one, on 0.2.6 and 0.2.8 (measured).

The cut is not a value of the step but one use of a value: the sum ``y + b`` passes its gradient back to ``y``,
whose weights learn, and none to ``b``. So the sums are no ``zero_derivative_nodes``, and the walk that finds the
starved biases runs once per bias, with only that bias's sums as its cuts, and is asked only about that bias.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .gradient_cuts import NoGradient, custom_derivative_scopes, loss_ends
from .softmaxes import Softmax
from .step_flow import TOP, CarriedState, Node, StepFlow

_SUMS = ("add", "add_any", "sub")
_SQUARES = ("square", "integer_pow", "mul")


@dataclass(frozen=True)
class ShiftRemover:
    """An operation of the step whose value does not change when its operand is shifted by a constant along some
    axes: a softmax over them, a subtraction of the mean over them, a variance over them."""

    site: jv.EqnSite  # the equation that makes its value: a softmax's division, the mean's subtraction
    kind: str  # 'jax.nn.softmax', 'jax.nn.log_softmax', 'mean subtraction' or 'variance'
    operand: Node  # the value it normalises (of a jax.nn.softmax in a custom_jvp call, the call's operand)
    shape: tuple[int, ...]  # the shape of that value
    axes: tuple[int, ...]  # the axes along which a constant shift of the value leaves its result unchanged
    made: tuple[Node, ...]  # the nodes of its result (of a softmax in a custom_jvp call, the call's outputs)


@dataclass(frozen=True)
class BiasSum:
    """A weight added to a value uniformly along some axes, on its way only into shift removers along them."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the `+` (or `-`) that adds it
    bias_shape: tuple[int, ...]  # the shape of the ParamState's value
    removers: tuple[ShiftRemover, ...]  # the shift removers the sum goes into, in the step's order
    made: Node  # the sum's node


@dataclass(frozen=True)
class ShiftRemovedBiasCut:
    """A weight whose every float path to the step's output is a sum that shift removers cancel: it gets no
    gradient from BPTT."""

    weight: StatePath  # the ParamState's path
    bias: BiasSum  # the first such sum its value meets
    sum_count: int  # how many such sums it meets first on its paths to the output: this one and the others
    # the ETP ops that read the weight through the sum and pass a gradient on (GradientWalk.read_through): braintrace
    # moves the weight online there; empty: no gradient reaches it, online or by BPTT
    read_through: tuple[jv.EqnSite, ...]


def _mean_of(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> tuple[jv.Var, tuple[int, ...]] | None:
    """The value and the axes ``var`` is the mean over (a reduce_sum divided by the count it sums, reshaped or
    broadcast: ``y.mean(a, keepdims=True)``), or None."""
    scaled = producer(jv.value_origin(var, producer))
    if scaled is None or scaled.primitive not in ("div", "mul") or len(scaled.eqn.invars) != 2:
        return None
    total, factor = scaled.eqn.invars
    if scaled.primitive == "mul" and jv.literal_number(factor) is None:
        total, factor = factor, total
    number = jv.literal_number(factor)
    if not number or not jv.is_var(total):
        return None
    summed = producer(jv.value_origin(total, producer))
    if summed is None or summed.primitive != "reduce_sum" or not jv.invars(summed.eqn):
        return None
    operand = jv.invars(summed.eqn)[0]
    shape = jv.aval_shape(operand)
    axes = tuple(int(axis) for axis in summed.eqn.params.get("axes", ()))
    count = math.prod(shape[axis] for axis in axes if axis < len(shape))
    scale = number if scaled.primitive == "div" else 1 / number
    return (operand, axes) if count and math.isclose(scale, count, rel_tol=1e-6) else None


def _squared(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> jv.Var | None:
    """The value ``var`` is the square of (``square``, ``x ** 2``, ``x * x``), or None."""
    site = producer(var)
    if site is None or site.primitive not in _SQUARES:
        return None
    operands = site.eqn.invars
    if site.primitive == "integer_pow" and site.eqn.params.get("y") != 2:
        return None
    if site.primitive == "mul" and (len(operands) != 2 or operands[0] is not operands[1]):
        return None
    return operands[0] if operands and jv.is_var(operands[0]) else None


def _aligned(mean: jv.Var, shape: tuple[int, ...], axes: tuple[int, ...],
             producer: Callable[[jv.Atom], jv.EqnSite | None]) -> bool:
    """Whether the mean subtracted is laid out against the values it was taken over: kept as a size-1 axis where
    it was taken (``keepdims=True``), then broadcast back along that axis only."""
    kept = tuple(1 if axis in axes else size for axis, size in enumerate(shape))
    if jv.aval_shape(mean) in (kept, ()):
        return True
    site = producer(mean)
    return (site is not None and site.primitive == "broadcast_in_dim" and bool(jv.invars(site.eqn))
            and jv.aval_shape(jv.invars(site.eqn)[0]) == kept
            and tuple(site.eqn.params.get("broadcast_dimensions", ())) == tuple(range(len(shape))))


def _lifted(softmax: Softmax) -> tuple[Node, tuple[Node, ...]] | None:
    """A softmax that is the body of JAX's own ``custom_jvp`` call (``jax_softmax_custom_jvp``): the call's operand
    and outputs, or None for a softmax inside another custom-derivative function, whose own rule gives its
    derivative."""
    parents = softmax.site.parents
    if not parents or jv.primitive_name(parents[-1]) != "custom_jvp_call":
        return None
    if jv.traced_function_name(parents[-1]) != "_softmax":
        return None
    scope = id(parents[-2]) if len(parents) > 1 else TOP
    made = jv.outvars(softmax.site.eqn)
    for binding in jv.sub_jaxpr_bindings(parents[-1]) or ():
        operand = next((outer for outer, inner in binding.inputs if inner is softmax.operand), None)
        outputs = [(scope, outer) for inner, outer in binding.outputs if inner in made]
        if operand is not None and jv.is_var(operand) and outputs:
            return (scope, operand), tuple(outputs)
    return None


def shift_removers(sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                   found_softmaxes: Sequence[Softmax]) -> list[ShiftRemover]:
    """The step's shift removers over axes of several values, in the step's order.

    ``sites``: every equation of the step, nested bodies included, in the step's order; ``producer``: the equation
    that computes a var (the locator's); ``found_softmaxes``: its softmaxes (``softmaxes.softmaxes``)."""
    custom_scopes = custom_derivative_scopes(sites)
    order = {id(site.eqn): index for index, site in enumerate(sites)}
    found = []
    for softmax in found_softmaxes:
        if softmax.size == 1:
            continue  # a constant, through which nothing passes at all (ETL221)
        scope = StepFlow.scope_of(softmax.site)
        operand: Node = (scope, softmax.operand)
        made = tuple((scope, var) for var in jv.outvars(softmax.site.eqn))
        if scope in custom_scopes:
            lifted = _lifted(softmax)
            if lifted is None:
                continue
            operand, made = lifted
        kind = "jax.nn.log_softmax" if softmax.log else "jax.nn.softmax"
        found.append(ShiftRemover(softmax.site, kind, operand, softmax.shape, softmax.axes, made))
    for site in sites:
        scope = StepFlow.scope_of(site)
        if site.primitive != "sub" or len(site.eqn.invars) != 2 or scope in custom_scopes:
            continue
        first, second = site.eqn.invars
        if not jv.is_var(first) or not jv.is_var(second):
            continue
        made = tuple((scope, var) for var in jv.outvars(site.eqn))
        centred = _mean_of(second, producer)
        if centred is not None and centred[0] is first:
            shape, axes = jv.aval_shape(first), centred[1]
            if not _aligned(second, shape, axes, producer):
                axes = tuple(range(len(shape)))  # broadcast back another way: only a shift of every value cancels
            if math.prod(shape[axis] for axis in axes) > 1:
                found.append(ShiftRemover(site, "mean subtraction", (scope, first), shape, axes, made))
            continue
        squares, square = _mean_of(first, producer), _squared(jv.value_origin(second, producer), producer)
        mean = _mean_of(square, producer) if square is not None else None
        value = _squared(squares[0], producer) if squares is not None else None
        if squares is None or mean is None or value is None or mean != (value, squares[1]):
            continue
        shape, axes = jv.aval_shape(value), squares[1]
        if math.prod(shape[axis] for axis in axes) > 1:
            found.append(ShiftRemover(site, "variance", (scope, value), shape, axes, made))
    return sorted(found, key=lambda remover: order.get(id(remover.site.eqn), 0))


def _uniform_axes(var: jv.Var, producer: Callable[[jv.Atom], jv.EqnSite | None]) -> set[int]:
    """The axes along which ``var``'s values are all the same, read off the broadcasts and casts that made it."""
    shape = jv.aval_shape(var)
    uniform = {axis for axis, size in enumerate(shape) if size == 1}
    site = producer(var)
    if site is None or not jv.invars(site.eqn):
        return uniform
    operand = jv.invars(site.eqn)[0]
    if site.primitive == "broadcast_in_dim":
        dims = tuple(int(dim) for dim in site.eqn.params.get("broadcast_dimensions", ()))
        inner = _uniform_axes(operand, producer)
        return (uniform | {axis for axis in range(len(shape)) if axis not in dims}
                | {dims[axis] for axis in inner if axis < len(dims)})
    if site.primitive in ("convert_element_type", "copy", "copy_p"):
        return uniform | _uniform_axes(operand, producer)
    return uniform


def _bias_sums(flow: StepFlow, sites: Sequence[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
               removers: Sequence[ShiftRemover], weight_invars: Mapping[jv.Var, StatePath],
               weight_vars: Mapping[StatePath, Sequence[jv.Var]], ends: Mapping[Node, object],
               carried: Mapping[StatePath, CarriedState], blocked: NoGradient) -> list[BiasSum]:
    """Each sum of a weight, uniform along some axes, with a value whose every way to the loss, at this step or a
    later one, goes into shift removers of the sum along those axes."""
    by_operand: dict[Node, list[ShiftRemover]] = {}
    for remover in removers:
        by_operand.setdefault(remover.operand, []).append(remover)
    found = []
    for site in sites:
        scope = StepFlow.scope_of(site)
        if site.primitive not in _SUMS or len(site.eqn.invars) != 2 or scope in blocked.custom_scopes:
            continue
        made = jv.outvars(site.eqn)[0]
        taking = by_operand.get((scope, made))
        if not taking:
            continue
        shape = jv.aval_shape(made)
        for index, operand in enumerate(site.eqn.invars):
            other = site.eqn.invars[1 - index]
            if not jv.is_var(operand):
                continue
            origin = jv.value_origin(operand, producer)
            weight = weight_invars.get(origin)
            if weight is None:
                continue
            rank = len(jv.aval_shape(operand))
            uniform = set(range(len(shape))) if rank == 0 else _uniform_axes(operand, producer) if rank == len(
                shape) else set()
            cancelling = tuple(remover for remover in taking if set(remover.axes) <= uniform)
            if not cancelling:
                continue
            starts = tuple((TOP, var) for var in weight_vars.get(weight, ()))
            if jv.is_var(other) and flow.reached(starts, {(scope, other): True}):
                continue  # the value it is added to carries it too: a gradient reaches it there
            walk = flow.gradient_walk([remover.made for remover in cancelling], ends, carried, blocked)
            if walk.passes_gradient(((scope, made),)):
                continue  # the sum also reaches the loss another way: the shift is seen there
            found.append(BiasSum(weight, site, jv.aval_shape(origin), cancelling, (scope, made)))
    return found


def shift_removed_bias_cuts(flow: StepFlow, sites: Sequence[jv.EqnSite],
                            producer: Callable[[jv.Atom], jv.EqnSite | None], removers: Sequence[ShiftRemover],
                            weight_invars: Mapping[jv.Var, StatePath],
                            weight_vars: Mapping[StatePath, Sequence[jv.Var]],
                            carried: Mapping[StatePath, CarriedState], output_vars: Sequence[jv.Var],
                            connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[ShiftRemovedBiasCut]:
    """The weights that get no gradient from BPTT because their every way to the output is a sum that shift
    removers cancel.

    ``flow``: the step's data flow; ``sites``: its equations; ``producer``: the equation that computes a var (the
    locator's); ``removers``: its shift removers; ``weight_invars``: input var -> ParamState path; ``weight_vars``:
    ParamState path -> its input vars; ``carried``: each state the step carries to the next (hidden states and
    untraced ones); ``output_vars``: the step's return value; ``connected``: ParamState path -> the ETP ops the
    compiler connected to it (``gradient_cuts.connected_ops``)."""
    outputs = loss_ends(output_vars)
    if not outputs or not removers:
        return []
    blocked = NoGradient(custom_derivative_scopes(sites))
    by_weight: dict[StatePath, list[BiasSum]] = {}
    for bias in _bias_sums(flow, sites, producer, removers, weight_invars, weight_vars, outputs, carried, blocked):
        by_weight.setdefault(bias.weight, []).append(bias)
    found = []
    for weight, sums in by_weight.items():
        # only this weight's sums are cuts: the values they add it to pass their gradient on
        walk = flow.gradient_walk([(bias.made,) for bias in sums], outputs, carried, blocked)
        for starved in walk.starved_weights({weight: weight_vars[weight]}):
            found.append(ShiftRemovedBiasCut(weight, sums[starved.cuts[0]], len(starved.cuts),
                                             walk.read_through(connected.get(weight, ()))))
    return found
