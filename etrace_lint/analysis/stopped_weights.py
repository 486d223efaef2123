"""Which weights reach the step's output and its new states only through ``jax.lax.stop_gradient``.

``jax.lax.stop_gradient(self.w.value)``, or a ``stop_gradient`` around an expression that holds the weight, passes
its value on and no gradient back: a weight every path of which to the step's output, its hidden states' new values
and the other states it writes crosses one gets a zero gradient from BPTT. A weight one use of which reaches them
around every ``stop_gradient`` still learns there (the straight-through form ``w + stop_gradient(q - w)``).

braintrace's own online rule is not JAX's reverse pass: an ETP op whose weight operand is the weight's value, only
laid out anew and through a ``stop_gradient`` (``braintrace.matmul(x, jax.lax.stop_gradient(self.w.value))``), is
one the compiler still connects to the weight, and its online gradient through that op is not zero although BPTT's
is (measured on braintrace 0.2.6 and 0.2.8). Such ops are noted apart (``read_through``).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .step_flow import TOP, Node, StepFlow

STOP_GRADIENT = "stop_gradient"


@dataclass(frozen=True)
class StoppedWeight:
    """A weight every path of whose value to the step's output and its new states passes a ``stop_gradient``."""

    weight: StatePath  # the ParamState's path
    stops: tuple[jv.EqnSite, ...]  # the stop_gradient equations its value meets first on those paths, in step order
    # the ETP ops the compiler connected that read the weight's value through one of those stops with only layout
    # equations between: braintrace's online rule ignores the stop there and gives the weight a gradient BPTT's
    # does not have; empty: no gradient reaches the weight, online or by BPTT
    read_through: tuple[jv.EqnSite, ...]


def stopped_weights(sites: Sequence[jv.EqnSite], weight_vars: Mapping[StatePath, list[jv.Var]], flow: StepFlow,
                    ends: Mapping[Node, object], connected: Container[int]) -> list[StoppedWeight]:
    """Each weight that reaches one of ``ends`` (the step's output, its states' new values) and does so only through
    a ``stop_gradient`` equation, in the order of ``weight_vars``.

    ``sites``: every equation of the step, nested bodies included, in the step's order; ``weight_vars``: ParamState
    path -> its input vars in the step; ``flow``: the step's data flow; ``connected``: the ``id()`` of each ETP op
    output the compiler connected to a hidden state."""
    stops = [site for site in sites if jv.primitive_name(site.eqn) == STOP_GRADIENT]
    if not stops:
        return []
    stopped: set[Node] = {node for site in stops for node in flow.outputs_of(site)}
    found = []
    for weight, variables in weight_vars.items():
        starts = tuple((TOP, var) for var in variables)
        if not flow.reached(starts, ends) or flow.reached(starts, ends, avoid=stopped):
            continue  # it reaches nothing, or it reaches something around every stop_gradient: it learns there
        inputs = {(flow.scope_of(site), var): index for index, site in enumerate(stops) for var in jv.invars(site.eqn)}
        first = sorted(set(flow.reached(starts, inputs, avoid=stopped)))
        met = tuple(stops[index] for index in first if flow.reached(flow.outputs_of(stops[index]), ends))
        read_through = tuple(
            site for site in flow.etp_sites
            if weight in flow.weights_read_by(site) and any(id(out) in connected for out in jv.outvars(site.eqn))
            and flow.reached(flow.outputs_of(site), ends, avoid=stopped))
        found.append(StoppedWeight(weight, met, read_through))
    return found
