from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.context import first_per_weight
    from etrace_lint.analysis.jaxpr_view import primitive_name
    from etrace_lint.core.naming import display_name, display_names

    if context.single_step_vjp:  # a single-step VJP gives these paths nothing: ETL201's
        return
    for use in first_per_weight([u for u in context.plain_uses if not u.decomposed]):
        op = primitive_name(use.site.eqn)
        weight, hidden = display_name(use.weight), display_names(use.hidden)
        also = "also " if use.partial else ""
        message = (f"{weight} {also}reaches {hidden} through a plain `{op}`, which no eligibility trace follows: "
                   f"under vjp_method='multi-step' that path learns from the reverse pass over each window of "
                   f"steps the learner is given (truncated BPTT), and its credit from one window to the next is "
                   f"lost; a window of one step leaves it only its same-step gradient. To carry it across windows, "
                   f"use an ETP op here (braintrace.matmul, braintrace.element_wise)")
        yield Hit(message=message, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight),),
                  facts=RuleFacts(hidden_states=tuple(display_name(h) for h in use.hidden), primitive=op,
                                  partial=use.partial, vjp_method="multi-step"))


RULE = AnalysisRule(
    id="ETL213",
    name="plain-path-learns-within-window",
    level=Level.NOTE,
    summary=("Under a multi-step VJP, a weight that reaches a hidden state through a plain JAX op learns that "
             "path only within each window of steps"),
    tags=("learning", "analysis"),
    check=check,
)
