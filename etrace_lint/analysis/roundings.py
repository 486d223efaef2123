"""The step's roundings of a float value to whole numbers, and the weights that reach the loss only through one.

``jnp.round`` (and ``jnp.around``, ``jnp.rint``), ``jnp.floor``, ``jnp.ceil`` and ``jnp.trunc`` are, in the step's
jaxpr, the primitives ``round``, ``floor`` and ``ceil`` (a ``jnp.trunc`` is a ``floor`` and a ``ceil`` of the same
value, one chosen by its sign); JAX gives each a derivative of zero everywhere, so no gradient passes back through
them, online or by BPTT. A weight quantized that way (``jnp.round(self.w.value * 8) / 8``), or whose hidden states
reach the step's output only rounded, gets no gradient at all when every float path of it to the output, at this
step or through the states it carries to a later one, crosses a rounding. The straight-through form
``w + jax.lax.stop_gradient(jnp.round(w) - w)`` keeps a path around the rounding and learns; so does a rounding
inside ``jax.custom_jvp`` or ``jax.custom_vjp``, whose own rule gives its derivative.

An ETP op whose weight operand is the rounded weight (``braintrace.matmul(x, jnp.round(w * 8) / 8)``) is one
braintrace's compiler reads the weight through, as :mod:`.gradient_cuts` says: such ops are noted apart
(``read_through``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .gradient_cuts import NoGradient, custom_derivative_scopes, loss_ends
from .step_flow import CarriedState, StepFlow

# how the user wrote a rounding, by its primitive
_ROUNDINGS = {"round": "jax.lax.round", "floor": "jnp.floor", "ceil": "jnp.ceil"}
# jit calls (inlined in the step) that jax.numpy writes around those primitives, by the call's name
_ROUNDING_CALLS = {"round": "jnp.round", "around": "jnp.round", "rint": "jnp.rint", "trunc": "jnp.trunc",
                   "fix": "jnp.fix"}


@dataclass(frozen=True)
class Rounding:
    """A rounding of a float value to whole numbers in the step, outside any custom-derivative function."""

    site: jv.EqnSite  # the first of its equations: where a finding about it lands
    function: str  # the function as the user called it: 'jnp.round', 'jnp.floor', 'jnp.ceil', 'jnp.trunc'
    sites: tuple[jv.EqnSite, ...]  # all its rounding equations (a jnp.trunc's floor and ceil): their outputs


@dataclass(frozen=True)
class RoundingCut:
    """A weight whose every float path to the step's output crosses a rounding (``jnp.round``, ``jnp.floor``,
    ``jnp.ceil``, ``jnp.trunc``): BPTT gives it no gradient."""

    weight: StatePath  # the ParamState's path
    rounding: Rounding  # the first rounding its value meets on its way to the output
    rounding_count: int  # the roundings it meets first on those paths: this one and the others
    hidden: tuple[StatePath, ...]  # the hidden states it reaches whose values reach the output only rounded
    # braintrace's online rule ignores the cut there and gives the weight a gradient BPTT's does not have (empty:
    # no gradient reaches the weight, online or by BPTT); GradientWalk.read_through finds them
    read_through: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through the rounding and pass a gradient on


def roundings(sites: Sequence[jv.EqnSite],
              jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]]) -> list[Rounding]:
    """Each rounding of a float value in the step, in the step's order.

    ``sites``: every equation of the step, nested bodies included, in the step's order; ``jit_parents``: the jit
    calls the compiler inlined around an equation (the locator's)."""
    custom_scopes = custom_derivative_scopes(sites)
    found: dict[int, tuple[str, list[jv.EqnSite]]] = {}
    for site in sites:
        primitive = site.primitive
        if primitive not in _ROUNDINGS or StepFlow.scope_of(site) in custom_scopes:
            continue
        if not any(not jv.carries_no_gradient(var) for var in jv.invars(site.eqn)):
            continue  # an integer value rounded: nothing to differentiate
        call = next((call for call in jit_parents(site.eqn)
                     if str(call.params.get("name", "")) in _ROUNDING_CALLS), None)
        if call is not None:
            shown, group = _ROUNDING_CALLS[str(call.params.get("name", ""))], id(call)
        else:
            shown, group = _ROUNDINGS[primitive], id(site.eqn)
        found.setdefault(group, (shown, []))[1].append(site)
    return [Rounding(made[0], shown, tuple(made)) for shown, made in found.values()]


def rounding_cuts(flow: StepFlow, sites: Sequence[jv.EqnSite], found: Sequence[Rounding],
                  weight_vars: Mapping[StatePath, Sequence[jv.Var]], carried: Mapping[StatePath, CarriedState],
                  output_vars: Sequence[jv.Var],
                  connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[RoundingCut]:
    """The weights that get no gradient from BPTT because a rounding stands on their every way to the output.

    ``flow``: the step's data flow; ``sites``: its equations; ``found``: its roundings; ``weight_vars``: ParamState
    path -> its input vars; ``carried``: each state the step carries to the next (hidden states and untraced ones);
    ``output_vars``: the step's return value; ``connected``: ParamState path -> the ETP ops the compiler connected
    to it (``gradient_cuts.connected_ops``)."""
    # a loss is a function of the float outputs
    outputs = loss_ends(output_vars)
    if not outputs or not found:
        return []
    cuts = [tuple(node for site in rounding.sites for node in flow.outputs_of(site)) for rounding in found]
    walk = flow.gradient_walk(cuts, outputs, carried, blocked=NoGradient(custom_derivative_scopes(sites)))
    return [RoundingCut(weight.weight, found[weight.cuts[0]], len(weight.cuts),
                        tuple(path for path in weight.states if carried[path].hidden),
                        walk.read_through(connected.get(weight.weight, ())))
            for weight in walk.starved_weights(weight_vars)]
