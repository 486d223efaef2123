"""Weights whose effect is carried to later steps in a state the compiler does not follow.

braintrace follows only ``brainstate.HiddenState``s from step to step. A weight
with no eligibility trace whose ETP op output the step stores in another
state (a ``ShortTermState``) that it reads back in the next step has a
recurrence the online gradient does not see: braintrace 0.2.8 gives it the
gradient of the current step through the current step only (ETL211), and
``--verify`` must not expect that to equal BPTT.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .gradient_cuts import NoGradient
from .step_flow import TOP, Node, StepFacts


@dataclass(frozen=True)
class CarriedUse:
    """A weight without a trace whose ETP op's output is kept in an untraced state that the next step reads."""

    weight: StatePath
    site: jv.EqnSite  # the weight's ETP op
    state: StatePath  # the state its output is stored in
    state_kind: str  # that state's class


def _carried_states(context: StepFacts) -> dict[Node, bt.UntracedState]:
    """The new values of the untraced states whose old value shapes the step's output, by node."""
    flow = context.flow
    outputs = {(TOP, v): "output" for v in context.output_vars}
    carried: dict[Node, bt.UntracedState] = {}
    for state in bt.untraced_states(context.module_info):
        if flow.reached(tuple((TOP, v) for v in state.invars), outputs):  # its old value shapes the step
            carried.update({(TOP, v): state for v in state.outvars})
    return carried


def carried_past_traces(context: StepFacts) -> list[CarriedUse]:
    """One per weight with a trace whose op output, or a hidden state it drives, is also stored in an untraced
    state whose old value the step reads: its trace follows the hidden states only, so its online gradient
    leaves out that path into every later step, and from the second step on it is not BPTT's."""
    carried = _carried_states(context)
    if not carried:
        return []
    flow = context.flow
    stored = {node: state.path for node, state in carried.items()}
    kinds = {state.path: state.kind for state in carried.values()}
    learning = context.learning_weights
    found: dict[StatePath, CarriedUse] = {}
    for site in flow.etp_sites:
        weights = [w for w in flow.weights_read_by(site) if w in learning and w not in found]
        if not weights:
            continue
        # a refractory neuron's last spike time is stored from a comparison, which carries no gradient of the weights
        reached = flow.reached(flow.outputs_of(site), stored, avoid=NoGradient())
        for weight in sorted(weights, key=str) if reached else ():
            found[weight] = CarriedUse(weight, site, reached[0], kinds[reached[0]])
    return list(found.values())


def carried_uses(context: StepFacts) -> list[CarriedUse]:
    """One per weight without a trace whose op output is stored in an untraced state whose old value
    the step reads; a store that a hidden state reads is a buffered use (ETL206) instead."""
    carried = _carried_states(context)
    if not carried:
        return []
    flow = context.flow
    buffered = {use.weight for use in context.buffered_uses}
    learning = context.learning_weights
    stored = {node: state.path for node, state in carried.items()}
    kinds = {state.path: state.kind for state in carried.values()}
    found: dict[StatePath, CarriedUse] = {}
    for site in flow.etp_sites:
        weights = [w for w in flow.weights_read_by(site) if w not in learning and w not in buffered and w not in found]
        if not weights:
            continue
        reached = flow.reached(flow.outputs_of(site), stored, avoid=flow.hidden)
        if reached:
            for weight in sorted(weights, key=str):
                found[weight] = CarriedUse(weight, site, reached[0], kinds[reached[0]])
    return list(found.values())
