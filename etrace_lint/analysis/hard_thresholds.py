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

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .step_flow import TOP, Node, StepFlow

# how the user wrote a comparison, by its primitive
_COMPARISONS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
# primitives with a float output and a zero derivative
_ZERO_DERIVATIVE = {"sign": "jnp.sign"}
# jit calls (inlined in the step) that jax.numpy writes with comparisons and a NaN-only float path
_ZERO_DERIVATIVE_CALLS = {"heaviside": "jnp.heaviside"}
# calls whose derivative is their own rule's, not their body's: a surrogate spike
_CUSTOM_DERIVATIVE = frozenset({"custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"})


@dataclass(frozen=True)
class HardThresholdCut:
    """A weight whose every float path to the step's output runs through hidden states whose values pass on
    only through a hard threshold (a spike without a surrogate gradient): it gets no gradient, online or by BPTT."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the threshold: the first equation that thresholds those hidden states' values
    threshold: str  # the threshold as the user wrote it ('>', 'jnp.heaviside', '.astype(int32)')
    hidden: tuple[StatePath, ...]  # the hidden states the weight reaches whose values pass on only thresholded


class _NoGradient:
    """The nodes no gradient passes through: integer and boolean values, and what a zero-derivative op makes,
    except inside a custom-derivative call and except the nodes ``passed``."""

    def __init__(self, made: frozenset[Node], custom_scopes: frozenset[int], passed: frozenset[Node] = frozenset()):
        self.made = made
        self.custom_scopes = custom_scopes
        self.passed = passed

    def __contains__(self, node: object) -> bool:
        if not isinstance(node, tuple) or node in self.passed:
            return False
        scope, var = node
        if scope in self.custom_scopes:
            return False
        return node in self.made or jv.carries_no_gradient(var)


def _thresholds(sites: list[jv.EqnSite], jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
                custom_scopes: frozenset[int]) -> list[tuple[jv.EqnSite, str, int]]:
    """Each equation of the step that thresholds a float value, with how the user wrote it and the threshold
    it belongs to (one ``jnp.heaviside`` is several equations), in the step's order."""
    found = []
    for site in sites:
        if StepFlow.scope_of(site) in custom_scopes:
            continue
        call = next((call for call in jit_parents(site.eqn)
                     if str(call.params.get("name", "")) in _ZERO_DERIVATIVE_CALLS), None)
        primitive = site.primitive
        floats = [var for var in jv.invars(site.eqn) if not jv.carries_no_gradient(var)]
        outs = jv.outvars(site.eqn)
        if call is not None:
            found.append((site, _ZERO_DERIVATIVE_CALLS[str(call.params.get("name", ""))], id(call)))
        elif primitive in _ZERO_DERIVATIVE and floats:
            found.append((site, _ZERO_DERIVATIVE[primitive], id(site.eqn)))
        elif floats and outs and all(jv.carries_no_gradient(out) for out in outs) and not jv.sub_jaxpr_bindings(
                site.eqn):
            found.append((site, _COMPARISONS.get(primitive, f".astype({jv.aval_dtype(outs[0])})"), id(site.eqn)))
    return found


def hard_threshold_cuts(flow: StepFlow, sites: list[jv.EqnSite],
                        jit_parents: Callable[[jv.JaxprEqn], tuple[jv.JaxprEqn, ...]],
                        weight_vars: Mapping[StatePath, list[jv.Var]],
                        carried: Mapping[StatePath, tuple[tuple[jv.Var, ...], tuple[jv.Var, ...]]],
                        hidden: frozenset[StatePath], output_vars: list[jv.Var]) -> list[HardThresholdCut]:
    """The weights that get no gradient because a hard threshold stands on their every way to ``output_vars``.

    ``flow``: the step's data flow; ``sites``: its equations; ``jit_parents``: the jit calls the compiler inlined
    around an equation (the locator's); ``weight_vars``: ParamState path -> its input vars; ``carried``: each state
    the step carries to the next (hidden states and untraced ones) -> (its input vars, its output vars);
    ``hidden``: which of those are hidden states."""
    # a loss is a function of the float outputs: an integer output (a spike count) has no gradient at all
    outputs: dict[Node, object] = {(TOP, v): "output" for v in output_vars if not jv.carries_no_gradient(v)}
    if not outputs:
        return []
    custom_scopes = frozenset(StepFlow.scope_of(site) for site in sites if any(
        jv.primitive_name(parent) in _CUSTOM_DERIVATIVE for parent in site.parents))
    thresholds = _thresholds(sites, jit_parents, custom_scopes)
    if not thresholds:
        return []
    groups: dict[int, frozenset[Node]] = {}
    for site, _, group in thresholds:
        groups[group] = groups.get(group, frozenset()) | frozenset(flow.outputs_of(site))
    made = frozenset().union(*groups.values())
    cut = _NoGradient(made, custom_scopes)
    # the carried states whose value reaches the output through a float path, at this step or a later one
    live: set[StatePath] = set()
    changed = True
    while changed:
        changed = False
        ends = dict(outputs)
        ends.update({(TOP, v): path for path in live for v in carried[path][1]})
        for path, (ins, outs) in carried.items():
            starts = tuple((TOP, v) for v in ins + outs if not jv.carries_no_gradient(v))
            if path not in live and flow.reached(starts, ends, avoid=cut):
                live.add(path)
                changed = True
    ends = dict(outputs)
    ends.update({(TOP, v): path for path in live for v in carried[path][1]})
    dead = {(TOP, v): path for path, (_, outs) in carried.items() if path in hidden and path not in live
            for v in outs}
    thresholded = {node: index for index, (site, _, _) in enumerate(thresholds) for node in flow.outputs_of(site)}
    through = _NoGradient(made, custom_scopes, made)  # to the first thresholds, not past them
    # past any threshold, as its spike would go with a surrogate; not past an integer value of another kind
    spiking = _NoGradient(frozenset(), custom_scopes, made)
    found = []
    for weight, invars in sorted(weight_vars.items(), key=lambda item: str(item[0])):
        starts = tuple((TOP, v) for v in invars)
        if flow.reached(starts, ends, avoid=cut):
            continue  # a float path to the output: it learns, around any threshold
        states = flow.reached(starts, dead, avoid=cut)
        if not states:
            continue  # it reaches no hidden state first (a cast of the weight itself is ETL215's)
        state_nodes = tuple((TOP, v) for path in states for v in carried[path][0] + carried[path][1])
        # the thresholds their values meet first, whose spikes go on to the output
        met = sorted(index for index in flow.reached(state_nodes, thresholded, avoid=through, past_ends=False)
                     if flow.reached(tuple(groups[thresholds[index][2]]), ends, avoid=spiking))
        if met:
            site, shown, _ = thresholds[met[0]]
            found.append(HardThresholdCut(weight, site, shown, tuple(states)))
    return found
