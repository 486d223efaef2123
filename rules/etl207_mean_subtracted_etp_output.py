from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class MeanSubtractedEtpOutput(NamesHiddenStates):
    """A connected weight's op output passes through a mean-subtracting op before its hidden states."""

    weight: str
    hidden_states: tuple[str, ...]
    cancelled_line: int | None  # the line of the mean-subtracting op, when it is not the op's own

    def message(self) -> str:
        weight, hidden = self.weight, joined(self.hidden_states)
        where = f" on line {self.cancelled_line}" if self.cancelled_line is not None else ""
        return (f"{weight} gets no online gradient although the compiler connects it to {hidden}: its op's output "
                f"passes through a mean-subtracting op (a layer norm, `y - y.mean()`){where} before it reaches "
                f"{hidden}, and braintrace reads the op's effect on the hidden state as that op's row sums, "
                f"which are exactly zero: normalise the op's input or the hidden state instead of the op's output")

    def properties(self) -> JsonObject:
        return {}  # its weight and hidden states are all it says: the finding's subject


def check(context: AnalysisContext) -> Iterator[Hit[MeanSubtractedEtpOutput]]:
    if not context.single_step_vjp:  # a multi-step VJP learns through the mean within each window: ETL213's
        return
    # a weight no gradient reaches at all (a stop_gradient, ETL220's, zeroes its row sums, not a mean)
    for use in context.zero_trace_uses:
        if tuple(use.weight) in context.gradient_free_weights:
            continue
        line = None
        if use.cancelled_at is not None and use.site is not None:
            location, op = context.locator.of_site(use.cancelled_at), context.locator.of_site(use.site)
            if location is not None and (op is None or location.line != op.line):
                line = location.line
        related = [("weight created here", use.weight)]
        if use.cancelled_at is not None:
            related.append(("the mean is subtracted here", use.cancelled_at))
        violation = MeanSubtractedEtpOutput(display_name(use.weight), tuple(display_name(h) for h in use.hidden), line)
        yield Hit(violation, weight_path=use.weight, eqn=use.site, related=tuple(related))


RULE = AnalysisRule(
    id="ETL207",
    name="mean-subtracted-etp-output",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    blocker=Blocker("mean subtracted", at="the mean is subtracted here"),
    summary="A connected weight's ETP op output is mean-subtracted (a layer norm) before the hidden state, so its "
            "eligibility trace, and its online gradient, is exactly zero",
    tags=("learning", "analysis"),
    violations=(MeanSubtractedEtpOutput,),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
