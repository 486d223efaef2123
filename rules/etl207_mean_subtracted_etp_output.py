from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.zero_gradients import zero_trace_uses
    from etrace_lint.core.naming import display_name, display_names

    for use in zero_trace_uses(context):
        weight, hidden = display_name(use.weight), display_names(use.hidden)
        where = ""
        if use.cancelled_at is not None and use.site is not None:
            location, op = context.locator.of_site(use.cancelled_at), context.locator.of_site(use.site)
            if location is not None and (op is None or location.line != op.line):
                where = f" on line {location.line}"
        message = (f"{weight} gets no online gradient although the compiler connects it to {hidden}: its op's output "
                   f"passes through a mean-subtracting op (a layer norm, `y - y.mean()`){where} before it reaches "
                   f"{hidden}, and braintrace reads the op's effect on the hidden state as that op's row sums, "
                   f"which are exactly zero: normalise the op's input or the hidden state instead of the op's output")
        related = [("weight created here", use.weight)]
        if use.cancelled_at is not None:
            related.append(("the mean is subtracted here", use.cancelled_at))
        yield Hit(message=message, weight_path=use.weight, eqn=use.site, related=tuple(related),
                  facts=RuleFacts(hidden_states=tuple(display_name(h) for h in use.hidden)))


RULE = AnalysisRule(
    id="ETL207",
    name="mean-subtracted-etp-output",
    level=Level.WARNING,
    summary="A connected weight's ETP op output is mean-subtracted (a layer norm) before the hidden state, so its "
            "eligibility trace, and its online gradient, is exactly zero",
    tags=("learning", "analysis"),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
