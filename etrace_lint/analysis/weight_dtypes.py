"""The dtype of each weight the step reads, as the traced step reads it.

JAX differentiates floating (and complex) values only: a ParamState that holds
integers or booleans gets no gradient from ``jax.grad`` (``jax.grad`` refuses
it outright), online or by BPTT, so it keeps its initial value whatever the
learner. Each weight's dtype is read off the step's input vars of its arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.naming import StatePath
from . import jaxpr_view as jv
from .locate import Locator


@dataclass(frozen=True)
class WeightDtype:
    """A weight the step reads, with the dtypes of the arrays it holds."""

    weight: StatePath  # the ParamState's path
    dtypes: tuple[str, ...]  # the distinct dtypes of its arrays as the step reads them ('float32', 'int32', 'bool')
    has_gradient: bool  # one of its arrays at least is floating or complex, which JAX differentiates
    read_at: jv.EqnSite | None  # an equation of the step that reads it, an ETP op first


def weight_dtypes(weight_vars: Mapping[StatePath, list[jv.Var]], locator: Locator) -> list[WeightDtype]:
    """Each weight of ``weight_vars`` (ParamState path -> its input vars in the step) with its dtypes."""
    found = []
    for weight, variables in weight_vars.items():
        if not variables:
            continue
        dtypes = tuple(dict.fromkeys(jv.aval_dtype(var) for var in variables))
        has_gradient = any(not jv.carries_no_gradient(var) for var in variables)
        sites = locator.weight_sites(weight)
        found.append(WeightDtype(weight, dtypes, has_gradient, sites[0] if sites else None))
    return found
