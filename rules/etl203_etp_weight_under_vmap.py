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
    from etrace_lint.core.naming import display_name

    warnings = context.vmap_warnings
    etp_names = context.vmap_decomposed_ops
    uses = first_per_weight([u for u in context.plain_uses if u.decomposed])
    for use in uses:
        weight, hidden = display_name(use.weight), ", ".join(display_name(h) for h in use.hidden)
        etp = f"`{sorted(etp_names)[0]}`" if len(etp_names) == 1 else "an ETP op"
        yield Hit(
            message=(f"weight {weight} is mapped over by `vmap`, so {etp} was decomposed into a plain "
                     f"`{primitive_name(use.site.eqn)}` and {weight} gets no online gradient on its way "
                     f"to hidden state {hidden}"),
            weight_path=use.weight, eqn=use.site,
            facts=RuleFacts(hidden_states=tuple(display_name(h) for h in use.hidden),
                            braintrace_warning=warnings[0] if warnings else ""))
    if warnings and not uses and not any(context.is_vmap_decomposition(s) for s in context.sites):
        # the warning came, but the step keeps no trace of where: say what braintrace said
        from etrace_lint.core.wording import plain_text

        yield Hit(message=f"an ETP op was decomposed under vmap: {plain_text(warnings[0])}",
                  facts=RuleFacts(braintrace_warning=warnings[0]))


RULE = AnalysisRule(
    id="ETL203",
    name="etp-weight-under-vmap",
    level=Level.WARNING,
    summary=("An ETP op mapped over by vmap with its weight batched is decomposed into plain ops, and its "
             "weight does not learn"),
    tags=("learning", "analysis"),
    check=check,
)
