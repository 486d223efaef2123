from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    import braintrace

    from etrace_lint.analysis.zero_gradients import untrained_readouts
    from etrace_lint.core.naming import display_name

    for use in untrained_readouts(context):
        weight = display_name(use.weight)
        message = (f"{weight} gets no online gradient on braintrace {braintrace.__version__}: it reaches no hidden "
                   f"state, so it has no eligibility trace, and this braintrace's single-step algorithms (D-RTRL, "
                   f"pp_prop, e-prop, ...) train every ParamState through its trace only, adding no same-step "
                   f"gradient: upgrade to braintrace 0.2.8 or later (which adds it), compile the learner with "
                   f"vjp_method='multi-step', or train {weight} apart with an ordinary gradient")
        yield Hit(message=message, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight),),
                  facts=RuleFacts(braintrace_version=braintrace.__version__))


RULE = AnalysisRule(
    id="ETL209",
    name="readout-without-gradient",
    level=Level.WARNING,
    summary="On braintrace 0.2.6, a weight that reaches no hidden state (a readout) gets no online gradient under "
            "single-step algorithms",
    tags=("learning", "analysis"),
    check=check,
    supersedes=("ETL003",),
    claims_zero_gradient=True,
)
