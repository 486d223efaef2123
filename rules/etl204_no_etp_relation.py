from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    if context.learning_weights:
        return
    from etrace_lint.analysis.context import opaque_transform_of

    if context.compiler_warned:
        return  # the compiler explains its exclusions itself
    if context.plain_uses or context.vmap_warnings or context.buffered_uses:
        return  # ETL201 / ETL203 / ETL206 name each weight on its line
    if any(opaque_transform_of(site) is not None for site in context.flow.etp_sites):
        return  # ETL202 names the op
    import braintrace

    from etrace_lint.analysis.braintrace_adapter import adds_same_step_gradients, untraced_states
    from etrace_lint.core.naming import display_name

    count = len(context.weight_paths)
    kept = untraced_states(context.module_info)
    carried = ", ".join(display_name(s.path) for s in kept[:3])
    refused = "braintrace.compile refuses this model ('No trainable weights are routed through ETP ops')"
    if not count:
        message = f"{refused}: it has no ParamState at all, so nothing learns online"
    else:
        plural = "s" if count != 1 else ""
        message = (f"{refused}: none of its {count} ParamState{plural} is connected to a hidden state through an "
                   f"ETP op, so none has an eligibility trace")
        learner = "a learner built from its class (braintrace.D_RTRL(model))"
        if not adds_same_step_gradients():
            message += (f", and on braintrace {braintrace.__version__} {learner} gives every weight a zero "
                        f"gradient: nothing learns online")
        elif kept:
            message += (f"; {learner} gives each weight its same-step gradient only, which ignores what "
                        f"{carried} carries to later steps")
        else:
            message += f"; {learner} gives each weight its same-step gradient only"
    if not context.hidden_outvars:
        if kept:
            kinds = sorted({s.kind for s in kept})
            message += (f"; it has no brainstate.HiddenState: what it carries from step to step is kept in {carried} "
                        f"({', '.join(kinds)}), which the compiler does not follow: make "
                        f"{'it' if len(kept) == 1 else 'them'} brainstate.HiddenState")
        else:
            message += "; it has no brainstate.HiddenState, so there is nothing for an eligibility trace to follow"
    yield Hit(message=message, state_path=kept[0].path if kept else None,
              facts=RuleFacts(weight_count=count, hidden_state_count=len(set(context.hidden_outvars.values()))))


RULE = AnalysisRule(
    id="ETL204",
    name="no-etp-relation",
    level=Level.WARNING,
    summary="No weight is connected to a hidden state by an ETP op, so braintrace.compile refuses the model and "
            "nothing learns online",
    tags=("learning", "analysis"),
    check=check,
)
