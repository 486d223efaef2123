"""The divisions of the step by a weight's value.

A step that divides by a weight (``dt / self.tau.value``, ``x / self.scale.value``, ``self.tau.value ** -1``)
divides by zero wherever that weight's value is zero: the quotient is infinite (or NaN for ``0 / 0``), and so are
the values and the gradients computed from it. A division is found where a ``div`` of the step (at its top level)
has as its divisor, or an ``integer_pow`` with a negative exponent has as its base, a weight's input var, as it is
or through ``braintrace.element_wise`` (its ``weight_fn`` applied), through equations that keep its values (a
reshape, a broadcast, a cast): a divisor that anything else changes first (``tau + eps``, ``jnp.maximum(tau,
eps)``, ``jax.nn.softplus(tau)``) is not the weight's value. Each division carries the values the divisor starts
from, read off the weight's value before any training step (as the target's factory left it). The divisions by a
hidden state's value are :mod:`.hidden_divisions`'.
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
class WeightDivision:
    """A division of the step by a weight's value, with how many of the values it divides by start at zero."""

    weight: StatePath  # the ParamState whose value is the divisor
    site: jv.EqnSite  # the division: the `div` (or negative `integer_pow`) equation of the step
    through_etp: bool  # the divisor is braintrace.element_wise's output of the weight, not the weight's value itself
    zero_values: int  # the divisor's elements that are exactly zero before the first step
    values: int  # all the divisor's elements: the weight array's (one array of a ParamState that holds several)


def weight_divisions(sites: list[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                     weight_invars: Mapping[jv.Var, StatePath],
                     weight_values: Mapping[jv.Var, npt.NDArray[np.generic]]) -> list[WeightDivision]:
    """Each division of the step by a weight's value, once per weight (its first), in the step's order.

    ``sites``: the step's equations; ``producer``: the equation that computes a var (the locator's);
    ``weight_invars``: each weight input var -> its ParamState's path; ``weight_values``: each such var -> its
    value now, before the first step."""
    found: dict[StatePath, WeightDivision] = {}
    for site, origin in jv.top_level_divisions(sites, producer):
        etp = producer(origin)
        through_etp = etp is not None and bt.is_etp_primitive(etp.eqn)
        if etp is not None and through_etp:
            if not jv.invars(etp.eqn):
                continue
            origin = jv.value_origin(jv.invars(etp.eqn)[0], producer)
        weight = weight_invars.get(origin)
        value = weight_values.get(origin)
        if weight is None or value is None or weight in found:
            continue
        if etp is not None and through_etp:
            value = bt.elementwise_factor(etp.eqn, value)
            if value is None:
                continue  # another ETP op than element_wise, or a weight_fn that cannot be evaluated
        array = np.asarray(value)
        found[weight] = WeightDivision(weight, site, through_etp, int(np.count_nonzero(array == 0)), int(array.size))
    return list(found.values())
