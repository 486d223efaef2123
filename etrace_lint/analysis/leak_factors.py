"""The leak (decay) factors of the step: weights that multiply a hidden state's previous value in its update.

A leaky recurrence ``h = tau * h + drive`` forgets its past at the rate of ``tau``: its new value's derivative
with respect to its previous value is ``tau``, unit by unit, and every eligibility trace braintrace keeps of
``h`` is multiplied by it at each step. A factor is found where a ``mul`` of the step (at its top level) reads
a weight's value, as it is or through ``braintrace.element_wise`` (its ``weight_fn`` applied), and a hidden
state's value at the step's start, both through equations that keep their values (a reshape, a broadcast, a
cast), and its product is added to (or subtracted from) other terms into that hidden state's new value, with
nothing else on the way: a product that a nonlinearity or a further product then changes is not the
recurrence's factor. Each factor carries the magnitudes it starts from, read off the weight's value before any
training step (as the target's factory left it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv

# equations that add a term into a sum: the product is still a term of the new value past them
_SUMS = frozenset({"add", "sub", "add_any"})


@dataclass(frozen=True)
class LeakFactor:
    """A weight that multiplies a hidden state's previous value in the step: the recurrence's leak or decay
    factor, with the magnitudes it starts from."""

    weight: StatePath  # the ParamState's path
    hidden: StatePath  # the hidden state whose previous value it multiplies
    site: jv.EqnSite  # the product: the `mul` equation of the step
    through_etp: bool  # the factor is an element-wise ETP op's output (braintrace.element_wise), not a plain `*`
    initial_magnitudes: tuple[float, ...]  # |factor| of each of its values before the first step, flattened


def _reaches(site: jv.EqnSite, target: frozenset[int],
             consumers: Callable[[jv.Atom], list[jv.EqnSite]]) -> bool:
    """Whether the product of ``site`` is a term of one of the vars ``target`` (by id), through sums only."""
    pending: list[jv.Var] = list(jv.outvars(site.eqn))
    seen: set[int] = set()
    while pending:
        var = pending.pop()
        if id(var) in target:
            return True
        if id(var) in seen:
            continue
        seen.add(id(var))
        for consumer in consumers(var):
            if not consumer.parents and consumer.primitive in jv.SAME_VALUE_PRIMITIVES | _SUMS:
                pending.extend(jv.outvars(consumer.eqn))
    return False


def leak_factors(sites: list[jv.EqnSite], producer: Callable[[jv.Atom], jv.EqnSite | None],
                 consumers: Callable[[jv.Atom], list[jv.EqnSite]], weight_invars: Mapping[jv.Var, StatePath],
                 weight_values: Mapping[jv.Var, npt.NDArray[np.generic]],
                 hidden_invars: Mapping[jv.Var, StatePath],
                 hidden_outvars: Mapping[jv.Var, StatePath]) -> list[LeakFactor]:
    """Each weight that multiplies a hidden state's previous value, once per weight and hidden state, in the
    step's order.

    ``sites``: the step's equations; ``producer`` and ``consumers``: the equation that computes a var and those
    that read it (the locator's); ``weight_invars``: each weight input var -> its ParamState's path;
    ``weight_values``: each weight input var -> its value now; ``hidden_invars`` and ``hidden_outvars``: each
    hidden state's var at the step's start and its new value -> its path."""
    found: dict[tuple[StatePath, StatePath], LeakFactor] = {}
    for site in sites:
        if site.parents or site.primitive != "mul" or len(jv.invars(site.eqn)) != 2:
            continue
        first, second = jv.invars(site.eqn)
        for factor, state in ((first, second), (second, first)):
            hidden = hidden_invars.get(jv.value_origin(state, producer))
            if hidden is None:
                continue
            origin = jv.value_origin(factor, producer)
            etp = producer(origin)
            through_etp = etp is not None and bt.is_etp_primitive(etp.eqn)
            if etp is not None and through_etp and jv.invars(etp.eqn):
                origin = jv.value_origin(jv.invars(etp.eqn)[0], producer)
            weight = weight_invars.get(origin)
            value = weight_values.get(origin)
            if weight is None or value is None or (weight, hidden) in found:
                continue
            if etp is not None and through_etp:
                value = bt.elementwise_factor(etp.eqn, value)
                if value is None:
                    continue  # another ETP op than element_wise, or a weight_fn that cannot be evaluated
            news = frozenset(id(v) for v, path in hidden_outvars.items() if path == hidden)
            if not _reaches(site, news, consumers):
                continue
            magnitudes = tuple(float(m) for m in np.abs(np.asarray(value)).ravel())
            found[(weight, hidden)] = LeakFactor(weight, hidden, site, through_etp, magnitudes)
    return list(found.values())
