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
class ReadoutWithoutGradient(Violation):
    """A weight that reaches no hidden state, on a braintrace that adds no same-step gradient."""

    weight: str
    braintrace_version: str

    def message(self) -> str:
        weight = self.weight
        return (f"{weight} gets no online gradient on braintrace {self.braintrace_version}: it reaches no hidden "
                f"state, so it has no eligibility trace, and this braintrace's single-step algorithms (D-RTRL, "
                f"pp_prop, e-prop, ...) train every ParamState through its trace only, adding no same-step "
                f"gradient: upgrade to braintrace 0.2.8 or later (which adds it), compile the learner with "
                f"vjp_method='multi-step', or train {weight} apart with an ordinary gradient")

    def properties(self) -> JsonObject:
        return {"braintraceVersion": self.braintrace_version}


def check(context: AnalysisContext) -> Iterator[Hit[ReadoutWithoutGradient]]:
    # a readout no gradient reaches at all (used only under jax.lax.stop_gradient, ETL220's, say): no braintrace
    # line and no VJP would train it
    for use in context.untrained_readouts:
        if tuple(use.weight) in context.gradient_free_weights:
            continue
        yield Hit(ReadoutWithoutGradient(display_name(use.weight), context.braintrace_version),
                  weight_path=use.weight, eqn=use.site, related=(("weight created here", use.weight),))


RULE = AnalysisRule(
    id="ETL209",
    name="readout-without-gradient",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    output_only=True,
    summary="On braintrace 0.2.6, a weight that reaches no hidden state (a readout) gets no online gradient under "
            "single-step algorithms",
    tags=("learning", "analysis"),
    violations=(ReadoutWithoutGradient,),
    check=check,
    supersedes=("ETL003",),
    claims_zero_gradient=True,
)
