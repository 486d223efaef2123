"""Which online gradients must equal BPTT, read from the compiled graph.

Exact: every algorithm at T=1 (there is no history yet), except for a
weight part of whose path to its hidden state crosses another ETP op (the
online gradient leaves that part out within the step); weights that reach
the loss without passing through a hidden state (readouts) and carry
nothing to later steps in a state the compiler does not follow; and, under
D-RTRL, a weight whose ETP op feeds hidden groups that are element-wise
(each unit's new state reads only its own old state), whose op output lands
on the same units (nothing relabels positions on the way), and whose
groups feed no other stateful group (the loss is reached only through them).

Everything else is an approximation: dense or gated recurrence, upstream
layers of a stack, pp_prop's factorised trace at T >= 2, partial paths.
These facts come from the step's jaxpr and the compiler's relations and
hidden groups, never from layer class names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis import braintrace_adapter as bt
from ..analysis import jaxpr_view as jv
from ..analysis.carried_states import carried_past_traces, carried_uses
from ..core.naming import StatePath, display_name, display_names

if TYPE_CHECKING:  # annotations only
    from ..analysis.context import AnalysisContext

EXACT_ALGORITHMS = frozenset({"d_rtrl"})  # exact on element-wise groups
_MIXED = "mixed"  # braintrace's PathClassification.MIXED: some paths direct, some through another ETP op


@dataclass(frozen=True)
class Expectation:
    exact: bool
    reason: str

    @property
    def label(self) -> str:
        return "exact" if self.exact else "approximation"


class GraphFacts:
    """Structural facts of one compiled step, computed once per model."""

    def __init__(self, context: AnalysisContext):
        self.jaxpr = bt.traced_jaxpr(context.module_info)
        self.groups = {g.index: g for g in context.hidden_groups}
        self.relations = context.relations
        self.reaching_hidden = set(context.weights_reaching_hidden())
        self.carried = {use.weight: use for use in carried_uses(context)}
        self.carried_past_trace = {use.weight: use for use in carried_past_traces(context)}
        # the weights a rule proves get no gradient at all, online or by BPTT (a bias a softmax removes, a rounding):
        # whatever their runs measure is float round-off (by each weight's path, its parts as text)
        self.zero_by_construction = frozenset(tuple(map(str, w)) for w in context.gradient_free_weights)
        self._flows: dict[tuple[jv.Var, ...], dict[jv.Var, bool]] = {}  # source vars -> var -> keeps positions

    def relations_of(self, weight: StatePath) -> list[bt.RelationView]:
        return [r for r in self.relations if tuple(weight) in r.weight_paths]

    def _flow(self, sources: tuple[jv.Var, ...]) -> dict[jv.Var, bool]:
        if sources not in self._flows:
            self._flows[sources] = jv.position_flow(self.jaxpr, {v: True for v in sources})
        return self._flows[sources]

    def group_is_elementwise(self, index: int) -> bool:
        group = self.groups[index]
        flow = self._flow(group.invars)
        return all(flow.get(v, True) for v in group.outvars)

    def lands_on_same_units(self, relation: bt.RelationView) -> bool:
        flow = self._flow((relation.y_var,))
        return all(flow.get(v, True) for i in relation.group_indices for v in self.groups[i].outvars)

    def downstream_groups(self, relation: bt.RelationView) -> list[bt.GroupView]:
        """Other hidden groups whose new value depends on this op's groups."""
        own = set(relation.group_indices)
        sources = (relation.y_var,) + tuple(v for i in own for v in self.groups[i].invars)
        flow = self._flow(sources)
        return [g for g in self.groups.values()
                if g.index not in own and any(v in flow for v in g.outvars)]


def expectation(facts: GraphFacts, weight: StatePath, algorithm: str, steps: int) -> Expectation:
    """Whether ``weight``'s online gradient under ``algorithm`` must equal BPTT over ``steps``."""
    relations = facts.relations_of(weight)
    if any(c == _MIXED for relation in relations for c in relation.classifications):
        # missed within the step already, at T=1 too (the compiler reports it as ETL006)
        return Expectation(False, "part of its path to the hidden state goes through another weight's op, "
                                  "which the online gradient leaves out")
    if steps <= 1:
        return Expectation(True, "one step: no history to approximate")
    if not relations:
        if tuple(weight) in facts.reaching_hidden:
            return Expectation(False, "reaches a hidden state without an eligibility trace")
        carried = facts.carried.get(tuple(weight))
        if carried is not None:
            return Expectation(False, f"its effect on later steps is carried in {display_name(carried.state)}, a "
                                      f"{carried.state_kind} the online gradient does not follow")
        return Expectation(True, "non-temporal: reaches the loss without passing through a hidden state")
    past_trace = facts.carried_past_trace.get(tuple(weight))
    if past_trace is not None:
        return Expectation(False, f"its effect on later steps is also carried in {display_name(past_trace.state)}, a "
                                  f"{past_trace.state_kind} the online gradient does not follow")
    if algorithm not in EXACT_ALGORITHMS:
        return Expectation(False, f"{algorithm} factorises the eligibility trace")
    for relation in relations:
        if relation.in_control_flow:
            return Expectation(False, "its ETP op is inside a descended loop")
        if any(c != "all_direct" for c in relation.classifications):
            return Expectation(False, "part of its path to the hidden state crosses another ETP op")
        for index in relation.group_indices:
            group = facts.groups[index]
            if not facts.group_is_elementwise(index):
                return Expectation(False, f"the recurrence of {display_names(group.hidden_paths)} mixes units "
                                          "(dense or gated recurrence)")
        if not facts.lands_on_same_units(relation):
            return Expectation(False, "its op output is moved across units before it reaches the hidden state")
        downstream = facts.downstream_groups(relation)
        if downstream:
            names = display_names(p for g in downstream for p in g.hidden_paths)
            return Expectation(False, f"it reaches the loss through a later stateful layer ({names})")
    groups = display_names(p for r in relations for i in r.group_indices for p in facts.groups[i].hidden_paths)
    return Expectation(True, f"element-wise recurrence of {groups}")
