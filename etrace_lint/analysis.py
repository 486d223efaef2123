"""What rules of our own get to look at: one compiled model and facts derived from it.

Derived facts are computed once, on first use, so a rule that does not need
them costs nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .locate import Locator

# Primitives that only move or re-type data: a weight passing through them is
# still "the weight" (the compiler traces through the same kind of chain).
LAYOUT_PRIMITIVES = frozenset({
    "reshape", "convert_element_type", "broadcast_in_dim", "transpose", "squeeze",
    "expand_dims", "copy", "copy_p", "slice", "dynamic_slice", "concatenate", "pjit",
    "jit", "closed_call", "core_call", "stop_gradient", "rev", "select_n", "gather",
})


@dataclass
class AnalysisContext:
    model: Any
    inputs: tuple
    compile_options: dict
    compilation: bt.Compilation
    locator: Locator
    options: dict  # settings of the run that rules may read (opt-in flags)

    @property
    def graph(self) -> Any:
        return self.compilation.graph

    @property
    def module_info(self) -> Any:
        return self.compilation.module_info

    @property
    def record_kinds(self) -> set[str]:
        return {bt.record_kind(r) for r in self.compilation.records}

    @functools.cached_property
    def weight_paths(self) -> dict[tuple, list]:
        """ParamState path -> its input vars in the traced step."""
        table: dict[tuple, list] = {}
        for var, path in bt.weight_invars(self.module_info).items():
            table.setdefault(path, []).append(var)
        return table

    @functools.cached_property
    def learning_weights(self) -> set[tuple]:
        return bt.relation_weight_paths(self.graph) if self.graph is not None else set()

    @functools.cached_property
    def hidden_outvars(self) -> dict[Any, tuple]:
        return bt.hidden_outvars(self.module_info)

    @functools.cached_property
    def hidden_invars(self) -> dict[Any, tuple]:
        return bt.hidden_invars(self.module_info)

    @functools.cached_property
    def jaxpr(self) -> Any:
        return bt.traced_jaxpr(self.module_info)

    @functools.cached_property
    def sites(self) -> list[jv.EqnSite]:
        return self.locator.sites

    @functools.cached_property
    def weight_provenance(self) -> dict[Any, frozenset]:
        """Top-level var -> the ParamState paths whose value flows into it."""
        flow: dict[Any, frozenset] = {v: frozenset([p]) for v, p in bt.weight_invars(self.module_info).items()}
        for eqn in jv.open_jaxpr(self.jaxpr).eqns:
            sources = frozenset().union(*(flow.get(v, frozenset()) for v in jv.invars(eqn)))
            if sources:
                for out in jv.outvars(eqn):
                    flow[out] = sources
        return flow

    def weights_reaching_hidden(self) -> dict[tuple, list[tuple]]:
        """ParamState path -> hidden state paths whose new value depends on it."""
        reach: dict[tuple, list[tuple]] = {}
        for var, hidden in self.hidden_outvars.items():
            for weight in self.weight_provenance.get(var, ()):
                reach.setdefault(weight, []).append(hidden)
        return reach


# Equations that combine a weight with data: the first one on a weight's path
# is where "the weight is used" in the user's code.
OPAQUE_TRANSFORMS = frozenset({"remat", "remat2", "checkpoint", "custom_jvp_call", "custom_vjp_call",
                               "custom_vjp_call_jaxpr", "custom_lin"})
VMAP_DECOMPOSED = "decomposed into standard JAX ops under vmap"


def explained_weights(context: AnalysisContext) -> set[tuple]:
    """Weights some compiler record already talks about."""
    explained = set()
    for record in context.compilation.records:
        if getattr(record, "weight_path", None):
            explained.add(tuple(record.weight_path))
        for key in ("weight_paths", "params", "sources"):
            for path in (bt.record_context(record).get(key) or ()):
                if isinstance(path, tuple):
                    explained.add(path)
    return explained


def contains_etp_op(eqn) -> bool:
    return any(bt.is_etp_primitive(site.eqn) for sub in jv.sub_jaxprs(eqn) for site in jv.walk(sub))


def first_use(context: AnalysisContext, weight: tuple):
    """The first top-level equation that does more than move the weight's data around."""
    flow = context.weight_provenance
    for site in context.sites:
        if site.parents:
            continue
        eqn = site.eqn
        if jv.primitive_name(eqn) in LAYOUT_PRIMITIVES:
            continue
        if any(weight in flow.get(v, ()) for v in jv.invars(eqn)):
            return site
    return None


@dataclass(frozen=True)
class PlainUse:
    weight: tuple
    hidden: tuple
    site: Any  # EqnSite of the plain op, or None


def plain_op_weights(context: AnalysisContext) -> list[PlainUse]:
    """Weights that reach a hidden state with no ETP op and no compiler record to say so."""
    explained = explained_weights(context)
    found = []
    for weight, hiddens in sorted(context.weights_reaching_hidden().items()):
        if weight in context.learning_weights or weight in explained:
            continue
        site = first_use(context, weight)
        if site is not None and (bt.is_etp_primitive(site.eqn) or contains_etp_op(site.eqn)):
            continue  # an ETP op the compiler could not see: reported as such, not as a plain op
        found.append(PlainUse(weight, sorted(hiddens)[0], site))
    return found


def vmap_warnings(context: AnalysisContext) -> list[str]:
    return [message for _, message in context.compilation.warnings if VMAP_DECOMPOSED in message]
