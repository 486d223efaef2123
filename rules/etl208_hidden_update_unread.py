from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class HiddenUpdateUnread(NamesHiddenStates):
    """The step's output never reads the new value of a connected weight's hidden states."""

    weight: str
    hidden_states: tuple[str, ...]
    vjp_method: str = "single-step"

    def message(self) -> str:
        weight, hidden = self.weight, joined(self.hidden_states)
        their = "its" if len(self.hidden_states) == 1 else "their"
        return (f"{weight} gets no online gradient although the compiler connects it to {hidden}: the step's "
                f"output never reads {their} new value in the same step (it reads a value computed before "
                f"{their} update, such as spikes taken before the reset), and braintrace's default "
                f"vjp_method='single-step' takes each step's learning signal at the hidden states' new values, "
                f"so {weight}'s eligibility trace is multiplied by zero: return a value computed from the updated "
                f"state (spikes after the reset), or train with vjp_method='multi-step'")

    def properties(self) -> JsonObject:
        return {"vjpMethod": self.vjp_method}


def check(context: AnalysisContext) -> Iterator[Hit[HiddenUpdateUnread]]:
    # a weight no gradient reaches at all (a hard threshold, ETL216's, say): reading its hidden states after the
    # update, or a multi-step VJP, would not give it one either
    for use in context.unread_state_uses:
        if tuple(use.weight) in context.gradient_free_weights:
            continue
        related = (("weight created here", use.weight),) + tuple(
            (f"{display_name(h)} created here", h) for h in use.hidden[:3])
        violation = HiddenUpdateUnread(display_name(use.weight), tuple(display_name(h) for h in use.hidden))
        yield Hit(violation, weight_path=use.weight, eqn=use.site, related=related)


RULE = AnalysisRule(
    id="ETL208",
    name="hidden-update-unread",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="A connected weight's hidden states are updated after the step's output is computed, so under "
            "vjp_method='single-step' its online gradient is exactly zero",
    tags=("learning", "analysis"),
    violations=(HiddenUpdateUnread,),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
