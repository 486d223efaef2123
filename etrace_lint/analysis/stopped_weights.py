"""Which weights reach the step's output and its new states only through ``jax.lax.stop_gradient``.

``jax.lax.stop_gradient(self.w.value)``, or a ``stop_gradient`` around an expression that holds the weight, passes
its value on and no gradient back: a weight every path of which to the step's output, its hidden states' new values
and the other states it writes crosses one gets a zero gradient from BPTT. A weight one use of which reaches them
around every ``stop_gradient`` still learns there (the straight-through form ``w + stop_gradient(q - w)``).

An ETP op whose weight operand is the stopped weight (``braintrace.matmul(x, jax.lax.stop_gradient(self.w.value))``)
is one braintrace's compiler reads the weight through, as :mod:`.gradient_cuts` says: such ops are noted apart
(``read_through``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .step_flow import Node, StepFlow

STOP_GRADIENT = "stop_gradient"


@dataclass(frozen=True)
class StoppedWeight:
    """A weight every path of whose value to the step's output and its new states passes a ``stop_gradient``."""

    weight: StatePath  # the ParamState's path
    stops: tuple[jv.EqnSite, ...]  # the stop_gradient equations its value meets first on those paths, in step order
    # braintrace's online rule ignores the cut there and gives the weight a gradient BPTT's does not have (empty:
    # no gradient reaches the weight, online or by BPTT); GradientWalk.read_through finds them
    read_through: tuple[jv.EqnSite, ...]  # the ETP ops that read the weight through a stop and pass a gradient on


def stop_gradients(sites: Sequence[jv.EqnSite]) -> list[jv.EqnSite]:
    """The step's ``jax.lax.stop_gradient`` equations, in the step's order (``sites``: every equation of the step,
    nested bodies included)."""
    return [site for site in sites if jv.primitive_name(site.eqn) == STOP_GRADIENT]


def stopped_weights(sites: Sequence[jv.EqnSite], weight_vars: Mapping[StatePath, list[jv.Var]], flow: StepFlow,
                    ends: Mapping[Node, object],
                    connected: Mapping[StatePath, Sequence[jv.EqnSite]]) -> list[StoppedWeight]:
    """Each weight that reaches one of ``ends`` (the step's output, its states' new values) and does so only through
    a ``stop_gradient`` equation, in the order of ``weight_vars``.

    ``sites``: every equation of the step, nested bodies included, in the step's order; ``weight_vars``: ParamState
    path -> its input vars in the step; ``flow``: the step's data flow; ``connected``: ParamState path -> the ETP
    ops the compiler connected to it (``gradient_cuts.connected_ops``)."""
    stops = stop_gradients(sites)
    if not stops:
        return []
    # every new state is an end of its own: a weight that reaches one around every stop learns there
    walk = flow.gradient_walk([flow.outputs_of(site) for site in stops], ends)
    return [StoppedWeight(starved.weight, tuple(stops[index] for index in starved.cuts),
                          walk.read_through(connected.get(starved.weight, ())))
            for starved in walk.starved_weights(weight_vars)]
