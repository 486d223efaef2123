from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.wording import slope_left_out_online, some_entries

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class WeightStartsAboveClip(Violation):
    """A weight clipped to a ceiling in the step's plain code, some of whose entries start above it, where the
    clip's slope is zero, so that BPTT gives them no gradient."""

    weight: str
    constraint: str  # the function as the user called it: 'jnp.minimum', 'jnp.clip'
    ceiling: float  # the constant the weight is kept at or below
    clipped_entries: int  # the weight's entries that start above the ceiling, where the clip's slope is zero
    entries: int  # all its entries
    read_by_etp: bool  # an ETP op reads the weight through the clip (braintrace.matmul(x, jnp.minimum(w, c)))

    def message(self) -> str:
        weight, fn, bound = self.weight, f"`{self.constraint}`", f"{self.ceiling:g}"
        clipped = some_entries(self.clipped_entries, self.entries, weight)
        said = (f"{fn} on this line keeps {weight} at or below {bound}, and its slope is 0 at {clipped}, which "
                f"start above {bound}: BPTT gives those entries no gradient, so trained by BPTT they never leave "
                f"their start")
        online = slope_left_out_online(weight, fn) if self.read_by_etp else ""
        return (f"{said}{online}: start {weight}'s entries at or below {bound} (a smaller initial scale, or "
                f"jnp.minimum of its initial value), or bound it smoothly, with a slope everywhere, as the ETP op's "
                f"weight_fn, whose slope braintrace's online rule applies: braintrace.matmul(x, {weight}, "
                f"weight_fn=lambda v: {bound} - jax.nn.softplus({bound} - v))")

    def properties(self) -> JsonObject:
        # its weight is the finding's subject: the writers print it
        return {"constraint": self.constraint, "ceiling": self.ceiling, "deadUnitCount": self.clipped_entries,
                "unitCount": self.entries, "readByEtpOp": self.read_by_etp}


def check(context: AnalysisContext) -> Iterator[Hit[WeightStartsAboveClip]]:
    for found in context.clip_ceilings:
        if not found.clipped_values:
            continue  # every entry starts where the clip has a slope
        violation = WeightStartsAboveClip(display_name(found.weight), found.function, found.ceiling,
                                          found.clipped_values, found.values, bool(found.read_by_etp))
        related = [("weight created here", found.weight)]
        related += [(f"the ETP op that reads {violation.weight} through {found.function}", op)
                    for op in found.read_by_etp[:1]]
        yield Hit(violation, weight_path=found.weight, eqn=found.site, related=tuple(related))


RULE = AnalysisRule(
    id="ETL227",
    name="weight-starts-above-clip",
    level=Level.WARNING,
    summary="A weight is clipped to a ceiling in plain code (jnp.minimum, jnp.clip) and some of its entries start "
            "above it, where the clip's slope is zero, so BPTT gives them no gradient and they never learn",
    tags=("training", "analysis"),
    violations=(WeightStartsAboveClip,),
    check=check,
)
