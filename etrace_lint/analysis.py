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
