from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesOp, NamesWeights
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class OpaqueTransformEtpOp(NamesOp, NamesWeights):
    """An ETP op inside a transform the compiler does not look into."""

    etp_op: str  # the ETP op's primitive
    weights: tuple[str, ...]  # the weights it reads
    transform: str  # the transform as the user wrote it: ``jax.checkpoint``
    primitive: str  # the transform's primitive: ``checkpoint``

    def message(self) -> str:
        names = ", ".join(self.weights)
        return (f"the ETP op `{self.etp_op}` on {names} is inside `{self.transform}`, which the compiler does not "
                f"look into, so {names} gets no online gradient from it; apply `{self.transform}` around the rest "
                f"of the step, not around the ETP op")

    def properties(self) -> JsonObject:
        return {"transform": self.transform, "primitive": self.primitive}


def check(context: AnalysisContext) -> Iterator[Hit[OpaqueTransformEtpOp]]:
    for site in context.flow.etp_sites:
        transform = context.opaque_transform_of(site)
        if transform is None or context.is_connected(site):
            continue  # a relation through this very op: a braintrace that opens the transform
        weights = sorted(context.flow.weights_read_by(site))
        if not weights:
            continue  # no ParamState behind it: nothing that could learn
        api = transform.api
        names = tuple(display_name(w) for w in weights)
        yield Hit(OpaqueTransformEtpOp(site.primitive, names, api, transform.site.primitive),
                  weight_path=weights[0], eqn=site, related=((f"`{api}` applied here", transform.site),))


RULE = AnalysisRule(
    id="ETL202",
    name="etp-op-in-opaque-transform",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="An ETP op inside jax.checkpoint, custom_jvp or custom_vjp is silently ignored by the compiler",
    tags=("learning", "analysis", "control-flow"),
    violations=(OpaqueTransformEtpOp,),
    check=check,
)
