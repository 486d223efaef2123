from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates, NamesOp
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class PlainPathWithinWindow(NamesOp, NamesHiddenStates):
    """Under a multi-step VJP, a weight reaches hidden states through a plain op no eligibility trace follows."""

    weight: str
    hidden_states: tuple[str, ...]
    primitive: str
    partial: bool  # the weight also learns through an ETP op
    vjp_method: str = "multi-step"

    def message(self) -> str:
        also = "also " if self.partial else ""
        return (f"{self.weight} {also}reaches {joined(self.hidden_states)} through a plain `{self.primitive}`, which "
                f"no eligibility trace follows: under vjp_method='multi-step' that path learns from the reverse "
                f"pass over each window of steps the learner is given (truncated BPTT), and its credit from one "
                f"window to the next is lost; a window of one step leaves it only its same-step gradient. To "
                f"carry it across windows, use an ETP op here (braintrace.matmul, braintrace.element_wise)")

    def properties(self) -> JsonObject:
        return {"primitive": self.primitive, "partial": self.partial, "vjpMethod": self.vjp_method}


def check(context: AnalysisContext) -> Iterator[Hit[PlainPathWithinWindow]]:
    if context.single_step_vjp:  # a single-step VJP gives these paths nothing: ETL201's
        return
    for use in context.first_plain_uses:
        op = use.site.primitive
        violation = PlainPathWithinWindow(display_name(use.weight), tuple(display_name(h) for h in use.hidden), op,
                                          use.partial)
        yield Hit(violation, weight_path=use.weight, eqn=use.site, related=(("weight created here", use.weight),))
    # a weight whose trace a mean subtraction zeroes (ETL207 under a single-step VJP) learns through the
    # subtraction's plain ops within each window too, and nothing across windows
    for zero in context.zero_trace_uses:
        if zero.site is None or zero.cancelled_at is None:
            continue
        violation = PlainPathWithinWindow(display_name(zero.weight), tuple(display_name(h) for h in zero.hidden),
                                          zero.cancelled_at.primitive, False)
        yield Hit(violation, weight_path=zero.weight, eqn=zero.site,
                  related=(("weight created here", zero.weight), ("the mean is subtracted here", zero.cancelled_at)))


RULE = AnalysisRule(
    id="ETL213",
    name="plain-path-learns-within-window",
    level=Level.NOTE,
    says=WeightVerdict.WITHIN_WINDOW,
    summary=("Under a multi-step VJP, a weight that reaches a hidden state through a plain JAX op learns that "
             "path only within each window of steps"),
    tags=("learning", "analysis"),
    violations=(PlainPathWithinWindow,),
    check=check,
)
