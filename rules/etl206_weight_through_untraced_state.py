from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.analysis.flows import weight_flow
from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.context import first_per_weight
    from etrace_lint.core.naming import display_name, display_names

    for use in first_per_weight(context.buffered_uses):
        weight, buffer = display_name(use.weight), display_name(use.buffer)
        hidden = display_names(use.hidden)
        readers = "reads" if len(use.hidden) == 1 else "read"
        message = (f"{weight}'s op output is stored in {buffer}, a {use.buffer_kind}, which {hidden} {readers} only "
                   f"in the next step; the compiler does not carry eligibility traces through a "
                   f"{use.buffer_kind}, so {weight} gets no online gradient through {hidden}: keep that value in "
                   f"a brainstate.HiddenState, or feed the op's output into the update of {hidden} in the same "
                   f"step")
        yield Hit(message=message, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight), (f"{buffer} created here", use.buffer)),
                  facts=RuleFacts(state=buffer, state_kind=use.buffer_kind,
                                  hidden_states=tuple(display_name(h) for h in use.hidden)))


RULE = AnalysisRule(
    id="ETL206",
    name="weight-through-untraced-state",
    level=Level.WARNING,
    summary="A weight's ETP op output is stored in a state the compiler does not follow (not a HiddenState) "
            "before it reaches a hidden state, so the weight gets no online gradient",
    tags=("learning", "analysis"),
    check=check,
    flow=weight_flow,
)
