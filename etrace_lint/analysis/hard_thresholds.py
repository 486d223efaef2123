"""Where the step passes a hidden state's value on only through a hard threshold: a spike with no surrogate gradient.

A comparison (``spike = (v > 1.0).astype(jnp.float32)``), ``jnp.heaviside`` or ``jnp.sign`` has a zero derivative
wherever it is defined, so no gradient flows back through it, online or by BPTT. When a hidden state's value
reaches the step's output only through such a threshold, at this step or at a later one, its learning signal is
zero, and a weight whose every float path to the output runs through such hidden states gets no gradient at all.
A surrogate (``braintools.surrogate.sigmoid``, a ``heaviside_surrogate_gradient`` primitive with a float output)
is not a hard threshold; neither is a comparison inside ``jax.custom_jvp`` or ``jax.custom_vjp``, whose own rule
gives the derivative. A loss is a function of the step's float outputs: a step that returns only integers (a spike
count) has no gradient whatever its spikes, and a threshold whose spike reaches the output only as integers is no
spike a surrogate would mend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .gradient_cuts import NoGradient, custom_derivative_scopes, loss_ends
from .step_flow import CarriedState, Node, StepFlow

# how the user wrote a comparison, by its primitive
_COMPARISONS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
# primitives with a float output and a zero derivative
_ZERO_DERIVATIVE = {"sign": "jnp.sign"}
# jit calls (inlined in the step) that jax.numpy writes with comparisons and a NaN-only float path
_ZERO_DERIVATIVE_CALLS = {"heaviside": "jnp.heaviside"}


@dataclass(frozen=True)
class HardThreshold:
    """A hard threshold of a float value in the step, outside any custom-derivative function: one comparison, or
    the equations of one ``jnp.heaviside``, one ``jnp.sign``, one cast of a float value to integers."""

    site: jv.EqnSite  # the first of its equations that reads a float value: where a finding about it lands
    threshold: str  # the threshold as the user wrote it ('>', 'jnp.heaviside', '.astype(int32)')
    made: tuple[Node, ...]  # the outputs of all its equations: no gradient passes back through them


@dataclass(frozen=True)
class HardThresholdCut:
    """A weight whose every float path to the step's output runs through hidden states whose values pass on
    only through a hard threshold (a spike without a surrogate gradient): it gets no gradient from BPTT."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the threshold: the first equation that thresholds those hidden states' values
    threshold: str  # the threshold as the user wrote it ('>', 'jnp.heaviside', '.astype(int32)')
    hidden: tuple[StatePath, ...]  # the hidden states the weight reaches whose values pass on only thresholded
    # braintrace's online rule ignores the cut there and gives the weight a gradient BPTT's does not have (empty:
    # no gradient reaches the weight, online or by BPTT); GradientWalk.read_through finds them
    read_through: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through a threshold and pass a gradient on


def _floats(site: jv.EqnSite) -> list[jv.Var]:
    """The float values an equation reads."""
    return [var for var in jv.invars(site.eqn) if not jv.carries_no_gradient(var)]


def hard_thresholds(flow: StepFlow, sites: Sequence[jv.EqnSite],
                    jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]]) -> list[HardThreshold]:
    """Each hard threshold of a float value in the step, in the step's order.

    ``flow``: the step's data flow; ``sites``: every equation of the step, nested bodies included, in the step's
    order; ``jit_parents``: the jit calls the compiler inlined around an equation (the locator's)."""
    custom_scopes = custom_derivative_scopes(sites)
    found: dict[int, tuple[str, list[jv.EqnSite], list[Node]]] = {}
    for site in sites:
        if StepFlow.scope_of(site) in custom_scopes:
            continue
        call = next((call for call in jit_parents(site.eqn)
                     if str(call.params.get("name", "")) in _ZERO_DERIVATIVE_CALLS), None)
        primitive = site.primitive
        floats = _floats(site)
        outs = jv.outvars(site.eqn)
        if call is not None:
            shown, group = _ZERO_DERIVATIVE_CALLS[str(call.params.get("name", ""))], id(call)
        elif primitive in _ZERO_DERIVATIVE and floats:
            shown, group = _ZERO_DERIVATIVE[primitive], id(site.eqn)
        elif floats and outs and all(jv.carries_no_gradient(out) for out in outs) and not jv.sub_jaxpr_bindings(
                site.eqn):
            shown, group = _COMPARISONS.get(primitive, f".astype({jv.aval_dtype(outs[0])})"), id(site.eqn)
        else:
            continue
        _, made_by, made = found.setdefault(group, (shown, [], []))
        made_by.append(site)
        made.extend(flow.outputs_of(site))
    # where a finding lands: the first equation that reads a float value (the first of them, where none does)
    return [HardThreshold(next((site for site in made_by if _floats(site)), made_by[0]), shown, tuple(made))
            for shown, made_by, made in found.values()]


def hard_threshold_cuts(flow: StepFlow, sites: Sequence[jv.EqnSite], found: Sequence[HardThreshold],
                        weight_vars: Mapping[StatePath, Sequence[jv.Var]], carried: Mapping[StatePath, CarriedState],
                        output_vars: Sequence[jv.Var],
                        connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[HardThresholdCut]:
    """The weights that get no gradient from BPTT because a hard threshold stands on their every way to the output.

    ``flow``: the step's data flow; ``sites``: its equations; ``found``: its hard thresholds; ``weight_vars``:
    ParamState path -> its input vars; ``carried``: each state the step carries to the next (hidden states and
    untraced ones); ``output_vars``: the step's return value; ``connected``: ParamState path -> the ETP ops the
    compiler connected to it (``gradient_cuts.connected_ops``)."""
    # a loss is a function of the float outputs: an integer output (a spike count) has no gradient at all
    outputs = loss_ends(output_vars)
    if not outputs or not found:
        return []
    walk = flow.gradient_walk([threshold.made for threshold in found], outputs, carried,
                              blocked=NoGradient(custom_derivative_scopes(sites)))
    cuts = []
    for starved in walk.starved_weights(dict(sorted(weight_vars.items(), key=lambda item: str(item[0])))):
        hidden = tuple(path for path in starved.states if carried[path].hidden)
        if hidden:  # through its hidden states' spikes (a cast of the weight itself is ETL215's)
            threshold = found[starved.cuts[0]]
            cuts.append(HardThresholdCut(starved.weight, threshold.site, threshold.threshold, hidden,
                                         walk.read_through(connected.get(starved.weight, ()))))
    return cuts
