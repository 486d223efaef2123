from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class RecurrenceThroughUntracedState(Violation):
    """A weight's op output is carried to the next step in a state the compiler does not follow."""

    weight: str
    state: str
    state_kind: str

    def message(self) -> str:
        name, kept, kind = self.weight, self.state, self.state_kind
        return (f"{name}'s op output is stored in {kept}, a {kind}, which the step reads back in the "
                f"next step: the compiler carries no eligibility trace through a {kind}, so {name} "
                f"learns from its same-step gradient only, which leaves out its effect through {kept} on "
                f"every later step and is not BPTT's gradient: keep {kept} in a brainstate.HiddenState")

    def properties(self) -> JsonObject:
        return {"state": self.state, "stateKind": self.state_kind}


def check(context: AnalysisContext) -> Iterator[Hit[RecurrenceThroughUntracedState]]:
    if not context.adds_same_step_gradients:
        return  # braintrace 0.2.6 gives such a weight nothing at all: ETL209
    for use in context.carried_uses:
        name, kept, kind = display_name(use.weight), display_name(use.state), use.state_kind
        yield Hit(RecurrenceThroughUntracedState(name, kept, kind), weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight), (f"{kept} created here", use.state)))


RULE = AnalysisRule(
    id="ETL211",
    name="recurrence-through-untraced-state",
    level=Level.WARNING,
    says=WeightVerdict.APPROXIMATE,
    summary="A weight's ETP op output is carried to the next step in a state the compiler does not follow, so its "
            "online gradient leaves out that path into later steps and is not BPTT's",
    tags=("learning", "analysis"),
    violations=(RecurrenceThroughUntracedState,),
    check=check,
    supersedes=("ETL003",),
)
