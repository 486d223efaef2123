"""What the facts about constructs with a zero derivative share: a ``stop_gradient``, a rounding, a hard threshold, a
softmax over one unit.

Each such construct is a *cut*: no gradient passes back through its output, online or by BPTT, and a weight whose
every path to the loss crosses one is starved (:meth:`.step_flow.GradientWalk.starved_weights`). Their facts share:

- what a loss reads: the step's float outputs (:func:`loss_ends`);
- the values no gradient passes whatever the constructs: integers and booleans (:class:`NoGradient`);
- the bodies of ``jax.custom_jvp`` and ``jax.custom_vjp`` functions (:func:`custom_derivative_scopes`): a construct
  there is no cut, the function's own rule gives its derivative (a straight-through rounding, a surrogate spike);
- the ETP ops the compiler connected to each weight (:func:`connected_ops`). braintrace's online rule is not JAX's
  reverse pass: an ETP op whose weight operand is a construct of the weight
  (``braintrace.matmul(x, jnp.round(w * 8) / 8)``, ``braintrace.matmul(x, jax.lax.stop_gradient(w))``) is one the
  compiler still connects to the weight, reading through the construct, and where the op's output passes a
  gradient to the loss the weight's online gradient there is not zero although BPTT's is (measured on braintrace
  0.2.6 and 0.2.8; the probe reports it as ETL422). :meth:`.step_flow.GradientWalk.read_through` finds those ops
  of a starved weight, and a rule that says ``ZERO`` leaves out a weight with any.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .step_flow import TOP, Node, StepFlow

# calls whose derivative is their own rule's, not their body's
CUSTOM_DERIVATIVE_CALLS = frozenset({"custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin"})


def custom_derivative_scopes(sites: Sequence[jv.EqnSite]) -> frozenset[int]:
    """The scopes of the bodies of custom-derivative calls (``jax.custom_jvp``, ``jax.custom_vjp``), whose own rule
    gives their derivative: a construct there is not a cut. ``sites``: every equation of the step, nested bodies
    included."""
    return frozenset(StepFlow.scope_of(site) for site in sites if any(
        jv.primitive_name(parent) in CUSTOM_DERIVATIVE_CALLS for parent in site.parents))


class NoGradient:
    """The nodes no gradient passes through whatever the constructs: integer and boolean values (a comparison, a
    mask, a ``jnp.trunc``'s sign test), except inside a custom-derivative call (``custom_scopes``), whose own rule
    gives the derivative. A walk's ``blocked``."""

    def __init__(self, custom_scopes: frozenset[int] = frozenset()):
        self.custom_scopes = custom_scopes

    def __contains__(self, node: object) -> bool:
        if not isinstance(node, tuple) or len(node) != 2:
            return False
        scope, var = node
        return scope not in self.custom_scopes and jv.carries_no_gradient(var)


def loss_ends(output_vars: Sequence[jv.Var]) -> dict[Node, object]:
    """What a loss reads, as a walk's ends: the step's float outputs. An integer output (a spike count) has no
    gradient at all."""
    return {(TOP, v): "output" for v in output_vars if not jv.carries_no_gradient(v)}


def connected_ops(flow: StepFlow, relations: Sequence[bt.RelationView]) -> dict[StatePath, tuple[jv.EqnSite, ...]]:
    """ParamState path -> the ETP ops of the step the compiler connected to it, in the step's order.

    ``relations``: the compiler's (``context.relations``). braintrace follows a weight to an op's weight operand
    through any chain of equations (``jnp.round(w * 8) / 8``), where ``flow.weights_read_by`` follows it only
    through layout equations (a reshape, a cast, a ``stop_gradient``)."""
    by_output: dict[int, set[StatePath]] = {}
    for relation in relations:
        by_output.setdefault(id(relation.y_var), set()).update(relation.weight_paths)
    found: dict[StatePath, list[jv.EqnSite]] = {}
    for site in flow.etp_sites:
        paths: set[StatePath] = set().union(*(by_output.get(id(out), ()) for out in jv.outvars(site.eqn)))
        for path in sorted(paths, key=str):
            found.setdefault(path, []).append(site)
    return {path: tuple(sites) for path, sites in found.items()}


@dataclass(frozen=True)
class ZeroDerivativeNodes:
    """The nodes of the step no gradient passes back through: the outputs of its constructs with a zero derivative
    and its values of no gradient. A walk that must not follow a gradient where there is none avoids them."""

    cuts: frozenset[Node]  # the outputs of its stop_gradients, roundings, hard thresholds and one-unit softmaxes
    blocked: NoGradient  # its integer and boolean values outside custom-derivative functions

    def __contains__(self, node: object) -> bool:
        return node in self.cuts or node in self.blocked

