from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext

# a weight_fn slope below this, in magnitude, is saturated: the value's gradient is multiplied by less than
# 1e-4, 2500 times less than a sigmoid's steepest slope (0.25); a sigmoid or tanh is that flat from about 9.2
SATURATED_SLOPE = 1e-4
THRESHOLD = "1e-4"  # SATURATED_SLOPE as the message writes it


@dataclass(frozen=True)
class SaturatedWeightFn(Violation):
    """A weight whose ETP op's ``weight_fn`` is flat (saturated) at the weight's starting value for some unit (an
    element of the weight), so the gradient of those units, online and by BPTT, is multiplied by a vanishingly small
    slope."""

    weight: str
    weight_fn: str  # the function's name ('sigmoid')
    op: str  # the ETP op as the user called it ('braintrace.element_wise', 'braintrace.matmul')
    smallest: float  # the smallest |weight_fn'| at the weight's starting values
    saturated_units: int  # its values where |weight_fn'| is below SATURATED_SLOPE
    units: int  # all its values

    def message(self) -> str:
        weight, fn, smallest = self.weight, f"`{self.weight_fn}`", f"{self.smallest:.2g}"
        if self.units == 1:
            where = f"its slope at {weight}'s starting value is {smallest}"
        elif self.saturated_units == self.units:
            where = (f"its slope at {weight}'s starting value is below {THRESHOLD} in all {self.units} units "
                     f"({smallest} at the smallest)")
        else:
            where = (f"its slope at {weight}'s starting value is below {THRESHOLD} in {self.saturated_units} of its "
                     f"{self.units} units ({smallest} at the smallest)")
        learn = "barely learn" if self.smallest > 0 else "barely learn (at a slope of 0, not at all)"
        if self.weight_fn == "relu":
            fix = (f"start those units of {weight} above 0 (jnp.abs of its initial value), or choose a weight_fn "
                   f"with a slope everywhere (jax.nn.softplus, jnp.abs)")
        else:
            fix = (f"start {weight} where {fn} is steep (a sigmoid or tanh is steepest at 0), or choose a weight_fn "
                   f"that is not flat there")
        return (f"{weight}'s weight_fn {fn} is saturated: {where}, and {self.op} on this line "
                f"multiplies their gradient, online and by BPTT alike, by that slope, so those units of {weight} "
                f"{learn}, whatever the algorithm: {fix}")

    def properties(self) -> JsonObject:
        # its weight is the finding's subject: the writers print it
        return {"weightFn": self.weight_fn, "smallestSlope": self.smallest, "slopeThreshold": SATURATED_SLOPE,
                "unitCount": self.units, "saturatedUnitCount": self.saturated_units}


def check(context: AnalysisContext) -> Iterator[Hit[SaturatedWeightFn]]:
    for found in context.weight_fn_slopes:
        saturated = sum(1 for slope in found.initial_slopes if slope < SATURATED_SLOPE)
        if not saturated:
            continue
        violation = SaturatedWeightFn(display_name(found.weight), found.weight_fn, found.op, min(found.initial_slopes),
                                      saturated, len(found.initial_slopes))
        yield Hit(violation, weight_path=found.weight, eqn=found.site, related=(("weight created here", found.weight),))


RULE = AnalysisRule(
    id="ETL219",
    name="saturated-weight-fn",
    level=Level.WARNING,
    summary="An element-wise or matmul weight's weight_fn is saturated at the weight's starting value (its slope "
            "below 1e-4 for some unit), so those units' gradient, online and by BPTT, is vanishingly small and they "
            "barely learn",
    tags=("training", "analysis"),
    violations=(SaturatedWeightFn,),
    check=check,
)
