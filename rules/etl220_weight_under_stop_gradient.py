from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class WeightUnderStopGradient(Violation):
    """A weight every use of which reaches the step's output and its states only through ``stop_gradient``."""

    weight: str
    stop_count: int  # the stop_gradient equations its value meets first: this line's and the others'

    def message(self) -> str:
        others = self.stop_count - 1
        where = "on this line" if others == 0 else f"on this line and {others} other{'s' if others > 1 else ''}"
        return (f"every use of {self.weight} reaches the step's output and its states only through "
                f"`jax.lax.stop_gradient` ({where}), so no gradient reaches {self.weight}, online or by BPTT: it "
                f"keeps its initial value although it is a trainable ParamState. If it should learn, take it out "
                f"of the stop_gradient (stop only the other operands); if it is meant to stay fixed, hold it in a "
                f"brainstate.State or as a constant, not a ParamState")

    def properties(self) -> JsonObject:
        return {"stopGradientCount": self.stop_count}  # its weight is the subject: the writers print it


def check(context: AnalysisContext) -> Iterator[Hit[WeightUnderStopGradient]]:
    for stopped in context.stopped_weights:
        if stopped.read_through or not stopped.stops:
            continue  # an ETP op braintrace reads it through still gives it an online gradient: not a zero
        first, *others = stopped.stops
        related = (("weight created here", stopped.weight),) + tuple(("also stopped here", site) for site in others)
        yield Hit(WeightUnderStopGradient(display_name(stopped.weight), len(stopped.stops)),
                  weight_path=stopped.weight, eqn=first, related=related)


RULE = AnalysisRule(
    id="ETL220",
    name="weight-under-stop-gradient",
    level=Level.WARNING,
    summary="A weight reaches the step's output and its states only through jax.lax.stop_gradient, so no gradient "
            "reaches it, online or by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    # the compiler's "learns online" of an ETP op whose output is stopped, the same-step gradient of a stopped
    # readout, and a multi-step VJP's plain path under the stop
    supersedes=("ETL001", "ETL003", "ETL213"),
    blocker=Blocker("under stop_gradient"),
    violations=(WeightUnderStopGradient,),
    check=check,
)
