"""Where the step converts a weight's value to an integer or boolean dtype before it uses it.

JAX differentiates floating (and complex) values only: ``jnp.round(w).astype(jnp.int32)``, ``w.astype(int)``
or the mask ``w > 0`` makes a value through which no gradient flows back to ``w``, online or by BPTT. A
*weight's value* here is one the step computes from that weight (or several) and constants alone: a
comparison of a hidden state (a spike) is not one, though the hidden state depends on a weight. The weight
still learns when another of its uses, not through such a conversion, reaches a hidden state or the step's
output (a pruning mask ``w * (w > 0)``: the product carries the gradient).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .step_flow import TOP, Node, StepFlow

# the weights a value is computed from alone, constants aside; an empty set: a constant
_Label = frozenset[StatePath]
# calls that run their one body on the same inputs: a value of weights alone stays one through them
_CALLS = frozenset({"pjit", "jit", "closed_call", "core_call"})


@dataclass(frozen=True)
class WeightCast:
    """A use of a weight that converts its value to an integer or boolean dtype, which passes no gradient back."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the equation that makes the integer or boolean value (a convert_element_type, a `gt`)
    dtype: str  # the dtype it makes ('int32', 'bool')
    only_use: bool  # no other use of the weight reaches a hidden state or the step's output: it gets no gradient


def weight_casts(jaxpr: jv.JaxprLike, weight_vars: Mapping[StatePath, list[jv.Var]], flow: StepFlow,
                 ends: Mapping[Node, object]) -> list[WeightCast]:
    """Each conversion of a weight's value to an integer or boolean dtype whose result reaches one of ``ends``
    (the hidden states' new values and the step's output), in the step's order.

    ``weight_vars``: ParamState path -> its input vars in the step; ``flow``: the step's data flow, which says
    whether the weight reaches ``ends`` around its conversions."""
    labels: dict[jv.Var, _Label] = {var: frozenset([path]) for path, variables in weight_vars.items()
                                    for var in variables}
    found: list[tuple[StatePath, jv.EqnSite, str]] = []
    _walk(jv.open_jaxpr(jaxpr), labels, (), found)
    reaching = [(weight, site, dtype) for weight, site, dtype in found if flow.reached(flow.outputs_of(site), ends)]
    if not reaching:
        return []
    casts: dict[StatePath, list[Node]] = {}
    for weight, site, _ in reaching:
        casts.setdefault(weight, []).extend(flow.outputs_of(site))
    only = {weight for weight, outputs in casts.items()
            if not flow.reached(tuple((TOP, v) for v in weight_vars.get(weight, ())), ends, avoid=set(outputs))}
    return [WeightCast(weight, site, dtype, weight in only) for weight, site, dtype in reaching]


def _walk(jaxpr: jv.Jaxpr, labels: dict[jv.Var, _Label], parents: tuple[jv.JaxprEqn, ...],
          found: list[tuple[StatePath, jv.EqnSite, str]]) -> None:
    """Label each var of ``jaxpr`` computed from weights and constants alone, and note each conversion of one."""
    for var in jaxpr.constvars:
        labels[var] = frozenset()
    for eqn in jaxpr.eqns:
        read = [labels.get(var) for var in jv.invars(eqn)]
        # None: it reads a value of the step's inputs or states, so nothing it makes is a weight's value
        operand: _Label | None = (None if any(label is None for label in read)
                                  else frozenset().union(*(label for label in read if label is not None)))
        bindings = jv.sub_jaxpr_bindings(eqn)
        if bindings:
            _walk_bodies(eqn, bindings, labels, parents, found)
            continue
        if operand is None or bindings is None or bt.is_etp_primitive(eqn):
            continue
        weighed = [var for var in jv.invars(eqn) if labels[var] and not jv.carries_no_gradient(var)]
        if weighed and all(jv.carries_no_gradient(out) for out in eqn.outvars):
            site = jv.EqnSite(eqn, parents)
            dtype = jv.aval_dtype(eqn.outvars[0]) if eqn.outvars else ""
            found.extend((weight, site, dtype) for weight in sorted(operand, key=str))
            continue  # an integer or boolean value: no gradient of it reaches the weight
        for out in eqn.outvars:
            labels[out] = operand


def _walk_bodies(eqn: jv.JaxprEqn, bindings: list[jv.SubJaxprBinding], labels: dict[jv.Var, _Label],
                 parents: tuple[jv.JaxprEqn, ...], found: list[tuple[StatePath, jv.EqnSite, str]]) -> None:
    """Follow the weights' values into the bodies of a call, a loop or a branch (a loop's carries mix)."""
    for binding in bindings:
        inner: dict[jv.Var, _Label] = {}
        for outer, var in binding.inputs:
            if not jv.is_var(outer):
                inner[var] = frozenset()
            elif outer in labels:
                inner[var] = labels[outer]
        for _, var in binding.carries:
            inner.pop(var, None)
        _walk(binding.jaxpr, inner, parents + (eqn,), found)
        if jv.primitive_name(eqn) in _CALLS and len(bindings) == 1 and not binding.carries:
            for result, out in binding.outputs:
                label = inner.get(result) if jv.is_var(result) else frozenset()
                if label is not None:
                    labels[out] = label
