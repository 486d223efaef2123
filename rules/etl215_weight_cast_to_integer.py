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
class WeightCastToInteger(Violation):
    """A weight the step uses only through a conversion of its value to an integer or boolean dtype."""

    weight: str
    dtype: str
    primitive: str  # the converting equation: convert_element_type, gt, ...

    def message(self) -> str:
        made = "turned into a boolean mask" if self.dtype == "bool" else f"converted to {self.dtype}"
        return (f"{self.weight} is {made} here (`{self.primitive}`) and the step uses it no other way, so no "
                f"gradient reaches {self.weight}, online or by BPTT: JAX does not differentiate through a "
                f"conversion to integers or booleans, and {self.weight} keeps its initial value. If it should "
                f"learn, give its gradient a float path, such as a straight-through estimator "
                f"(`{self.weight} + jax.lax.stop_gradient(q - {self.weight})`, q the converted value as a float); "
                f"if it is fixed, keep it in a brainstate.State")

    def properties(self) -> JsonObject:
        return {"dtype": self.dtype, "primitive": self.primitive}  # its weight is the subject: the writers print it


def check(context: AnalysisContext) -> Iterator[Hit[WeightCastToInteger]]:
    reported = set()
    for cast in context.weight_casts:
        if cast.only_use and cast.weight not in reported:  # its first conversion; one that still learns is fine
            reported.add(cast.weight)
            violation = WeightCastToInteger(display_name(cast.weight), cast.dtype, cast.site.primitive)
            yield Hit(violation, weight_path=cast.weight, eqn=cast.site,
                      related=(("weight created here", cast.weight),))


RULE = AnalysisRule(
    id="ETL215",
    name="weight-cast-to-integer",
    level=Level.WARNING,
    summary="A weight is used only through a conversion of its value to an integer or boolean dtype, so no "
            "gradient reaches it, online or by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    supersedes=("ETL001",),  # the compiler's "learns online" of an ETP op that reads the converted value
    blocker=Blocker("converted to an integer or boolean"),
    violations=(WeightCastToInteger,),
    check=check,
)
