"""The slopes of the ETP ops' ``weight_fn`` at their weights' starting values.

``braintrace.element_wise(w, weight_fn=f)`` uses ``f(w)`` in the step, and ``braintrace.matmul(x, w,
weight_fn=f)`` uses ``x @ f(w)``, so the gradient of ``w``, online and by BPTT alike, is the gradient of ``f(w)``
multiplied by ``f'(w)``, value by value. Where ``f`` is flat at the weight's value (a sigmoid of 12 has a slope of
6e-6, a relu of a value at or below 0 a slope of 0), that value barely learns, or not at all, whatever the
algorithm. An op is found where an element-wise or matmul ETP op of the step (at its top level) has a ``weight_fn``
and reads a weight's value
through equations that keep its values (a reshape, a broadcast, a cast); each carries the magnitude of
``weight_fn``'s slope at each of the weight's values before any training step (as the target's factory left it).
A ``weight_fn`` that is not element-wise (each output depends on other values too) has no slope per value and is
not here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv


@dataclass(frozen=True)
class WeightFnSlope:
    """An element-wise or matmul ETP op with a ``weight_fn``, and the slope of that function at each of its weight's
    values before the first step."""

    weight: StatePath  # the ParamState's path
    site: jv.EqnSite  # the ETP op (braintrace.element_wise, braintrace.matmul) that applies the weight_fn
    weight_fn: str  # the weight_fn's name as the user wrote it ('sigmoid', 'exp', '<lambda>')
    op: str  # the ETP op as the user called it: 'braintrace.element_wise', 'braintrace.matmul'
    initial_slopes: tuple[float, ...]  # |weight_fn'| at each of the weight's values before the first step, flattened


def weight_fn_slopes(sites: list[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                     weight_invars: Mapping[jv.Var, StatePath],
                     weight_values: Mapping[jv.Var, npt.NDArray[np.generic]]) -> list[WeightFnSlope]:
    """Each element-wise or matmul ETP op with a ``weight_fn`` that reads a weight, once per weight and
    ``weight_fn`` name (its first op), in the step's order.

    ``sites``: the step's equations; ``producer``: the equation that computes a var (the locator's);
    ``weight_invars``: each weight input var -> its ParamState's path; ``weight_values``: each weight input var ->
    its value now, before the first step."""
    found: dict[tuple[StatePath, str], WeightFnSlope] = {}
    for site in sites:
        operand = bt.weight_fn_operand(site.eqn) if not site.parents else None
        if operand is None or len(jv.invars(site.eqn)) <= operand:
            continue
        origin = jv.value_origin(jv.invars(site.eqn)[operand], producer)
        weight, value = weight_invars.get(origin), weight_values.get(origin)
        if weight is None or value is None:
            continue
        slopes = bt.elementwise_slopes(site.eqn, value)
        if slopes is None or (weight, slopes.weight_fn) in found:
            continue
        initial = tuple(float(s) for s in slopes.slopes.ravel())
        found[(weight, slopes.weight_fn)] = WeightFnSlope(weight, site, slopes.weight_fn, slopes.op, initial)
    return list(found.values())
