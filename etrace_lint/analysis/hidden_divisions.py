"""The divisions of the step by a hidden state's value at the step's start.

A step that divides by a hidden state (``x / self.g.value``, ``1.0 / self.g.value``, ``self.g.value ** -1``)
divides by zero wherever that state's value is zero: the quotient is infinite (or NaN for ``0 / 0``), and so are
the values and the gradients computed from it. A division is found where a ``div`` of the step (at its top level)
has as its divisor, or an ``integer_pow`` with a negative exponent has as its base, a hidden state's input var,
through equations that keep its values (a reshape, a broadcast, a cast): a divisor that anything else changes
first (``g + eps``, ``jnp.maximum(g, eps)``) is not the state's value. Each division carries the values the
state's elements start from, read off the hidden state's value before any training step (as the target's
factory, or ``init_state``, left it). The divisions by a weight's value are :mod:`.weight_divisions`'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import jaxpr_view as jv


@dataclass(frozen=True)
class HiddenDivision:
    """A division of the step by a hidden state's value at the step's start, with the values it starts from."""

    hidden: StatePath  # the hidden state whose value at the step's start is the divisor
    site: jv.EqnSite  # the division: the `div` (or negative `integer_pow`) equation of the step
    zero_units: int  # the state's elements that are exactly zero before the first step
    units: int  # all the state's elements the divisor holds


def hidden_divisions(sites: list[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                     hidden_invars: Mapping[jv.Var, StatePath],
                     hidden_values: Mapping[jv.Var, npt.NDArray[np.generic]]) -> list[HiddenDivision]:
    """Each division of the step by a hidden state's value at its start, once per hidden state (its first), in the
    step's order.

    ``sites``: the step's equations; ``producer``: the equation that computes a var (the locator's);
    ``hidden_invars``: each hidden state's var at the step's start -> its path; ``hidden_values``: each such var ->
    its value now, before the first step."""
    found: dict[StatePath, HiddenDivision] = {}
    for site, origin in jv.top_level_divisions(sites, producer):
        hidden = hidden_invars.get(origin)
        value = hidden_values.get(origin)
        if hidden is None or value is None or hidden in found:
            continue
        array = np.asarray(value)
        found[hidden] = HiddenDivision(hidden, site, int(np.count_nonzero(array == 0)), int(array.size))
    return list(found.values())
