from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.context import OPAQUE_TRANSFORMS, opaque_transform_of
    from etrace_lint.analysis.jaxpr_view import outvars, primitive_name
    from etrace_lint.core.naming import display_name

    connected = context.relation_outputs
    for site in context.flow.etp_sites:
        transform = opaque_transform_of(site)
        if transform is None or any(id(v) in connected for v in outvars(site.eqn)):
            continue  # a relation through this very op: a braintrace that opens the transform
        weights = sorted(context.flow.weights_read_by(site))
        if not weights:
            continue  # no ParamState behind it: nothing that could learn
        kind = primitive_name(transform.eqn)
        api = OPAQUE_TRANSFORMS[kind]
        names = ", ".join(display_name(w) for w in weights)
        yield Hit(
            message=(f"the ETP op `{primitive_name(site.eqn)}` on {names} is inside `{api}`, which the "
                     f"compiler does not look into, so {names} gets no online gradient from it; apply `{api}` "
                     f"around the rest of the step, not around the ETP op"),
            weight_path=weights[0], eqn=site,
            related=((f"`{api}` applied here", transform),),
            facts=RuleFacts(transform=api, primitive=kind, weights=tuple(display_name(w) for w in weights)))


RULE = AnalysisRule(
    id="ETL202",
    name="etp-op-in-opaque-transform",
    level=Level.WARNING,
    summary="An ETP op inside jax.checkpoint, custom_jvp or custom_vjp is silently ignored by the compiler",
    tags=("learning", "analysis", "control-flow"),
    check=check,
)
