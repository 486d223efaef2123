from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.zero_gradients import unread_state_uses
    from etrace_lint.core.naming import display_name, display_names

    for use in unread_state_uses(context):
        weight, hidden = display_name(use.weight), display_names(use.hidden)
        their = "its" if len(use.hidden) == 1 else "their"
        message = (f"{weight} gets no online gradient although the compiler connects it to {hidden}: the step's "
                   f"output never reads {their} new value in the same step (it reads a value computed before "
                   f"{their} update, such as spikes taken before the reset), and braintrace's default "
                   f"vjp_method='single-step' takes each step's learning signal at the hidden states' new values, "
                   f"so {weight}'s eligibility trace is multiplied by zero: return a value computed from the updated "
                   f"state (spikes after the reset), or train with vjp_method='multi-step'")
        related = (("weight created here", use.weight),) + tuple(
            (f"{display_name(h)} created here", h) for h in use.hidden[:3])
        yield Hit(message=message, weight_path=use.weight, eqn=use.site, related=related,
                  facts=RuleFacts(hidden_states=tuple(display_name(h) for h in use.hidden), vjp_method="single-step"))


RULE = AnalysisRule(
    id="ETL208",
    name="hidden-update-unread",
    level=Level.WARNING,
    summary="A connected weight's hidden states are updated after the step's output is computed, so under "
            "vjp_method='single-step' its online gradient is exactly zero",
    tags=("learning", "analysis"),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
