"""The plain uses of the step's weights: a plain (not ETP) JAX op that reads a weight and whose result reaches a
hidden state, a path no eligibility trace follows (ETL201's, and ETL203's, ETL204's and ETL213's)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .gradient_cuts import ZeroDerivativeNodes
from .step_flow import TOP, AnyOf, Node, StepFlow


@dataclass(frozen=True)
class PlainUse:
    """A weight read by a plain JAX op whose result reaches a hidden state."""

    weight: StatePath
    site: jv.EqnSite
    hidden: tuple[StatePath, ...]  # hidden state paths it reaches
    partial: bool  # the weight also learns through an ETP op; this path is missing from it
    decomposed: bool  # the op is an ETP op that vmap decomposed (braintrace's batching fallback)


def plain_uses(flow: StepFlow, weight_invars: Mapping[jv.Var, StatePath], learning: Collection[StatePath],
               explained: Collection[StatePath], stops: ZeroDerivativeNodes) -> list[PlainUse]:
    """Every plain use of a weight that reaches a hidden state, in the step's order.

    For a weight the compiler connected through an ETP op, only a plain path
    that reaches the hidden state without crossing an ETP op counts: through
    the ETP op's weight operand (a mask, ``abs``) the compiler follows the
    weight itself. A path that crosses a value no gradient passes back
    through (``context.zero_derivative_nodes``: a rounding, a
    ``stop_gradient``, an integer), before the op or after it, is no use
    either: it carries no gradient, online or by BPTT.

    ``flow``: the step's data flow; ``weight_invars``: the step's input var of each weight array -> its ParamState
    path; ``learning``: the weights the compiler connected to a hidden state; ``explained``: the weights a compiler
    record already explains, left out; ``stops``: the nodes no gradient passes back through.
    """
    if not flow.consumers:  # every weight goes through ETP ops or layout only
        return []
    live = _live_operands(flow, weight_invars, stops)
    found = []
    for consumer in flow.consumers:
        weights = sorted(w for w in consumer.weights if w not in explained)
        if not weights:
            continue
        decomposed = bt.is_vmap_decomposition(consumer.site.eqn)
        scope = flow.scope_of(consumer.site)
        starts = tuple(node for node in consumer.outputs if node not in stops)
        for weight in weights:
            if not any((scope, var) in live[weight] for var in jv.invars(consumer.site.eqn)):
                continue  # its value reaches the op only through a value no gradient passes back through
            partial = weight in learning
            hidden = flow.hidden_reached(starts, AnyOf(flow.etp_outputs, stops) if partial else stops)
            if hidden:
                found.append(PlainUse(weight, consumer.site, tuple(hidden), partial, decomposed))
    return found


def _live_operands(flow: StepFlow, weight_invars: Mapping[jv.Var, StatePath],
                   stops: ZeroDerivativeNodes) -> dict[StatePath, set[Node]]:
    """Each weight's operand nodes of its plain consumers that its value reaches without crossing ``stops``."""
    operands: dict[StatePath, dict[Node, Node]] = {}
    for consumer in flow.consumers:
        scope = flow.scope_of(consumer.site)
        nodes = {(scope, var): (scope, var) for var in jv.invars(consumer.site.eqn)}
        for weight in consumer.weights:
            operands.setdefault(weight, {}).update(nodes)
    starts: dict[StatePath, list[Node]] = {}
    for var, path in weight_invars.items():
        starts.setdefault(path, []).append((TOP, var))
    return {weight: set(flow.reached(tuple(starts.get(weight, ())), ends, avoid=stops))
            for weight, ends in operands.items()}
