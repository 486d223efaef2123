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


@dataclass(frozen=True)
class ZeroWeightDivisor(Violation):
    """A division of the step by a weight's value while that value starts at zero in some entry, so the first
    training step divides by zero."""

    weight: str
    through_etp: bool  # the divisor is braintrace.element_wise's output of the weight, not its value itself
    zero_entries: int  # the divisor's entries that start at zero
    entries: int  # all its entries

    def message(self) -> str:
        weight = self.weight
        if self.entries == 1:
            start = f"{weight} starts at zero"
        elif self.zero_entries == self.entries:
            start = f"all {self.entries} entries of {weight} start at zero"
        else:
            verb = "starts" if self.zero_entries == 1 else "start"
            start = f"{self.zero_entries} of the {self.entries} entries of {weight} {verb} at zero"
        divisor = f"braintrace.element_wise's value of {weight}" if self.through_etp else f"{weight}'s value"
        return (f"this line divides by {divisor}, and {start} before the first step: the first training step "
                f"divides by zero there, so its quotient is infinite or NaN and the values or gradients computed "
                f"from it are not finite from the start, by BPTT as much as online: start {weight} away from zero "
                f"(initialise it with the value you meant, a time constant or jnp.ones, not zeros), or divide by a "
                f"value kept above zero, such as braintrace.element_wise({weight}, weight_fn=jax.nn.softplus)")

    def properties(self) -> JsonObject:
        # its weight is the finding's subject: the writers print it
        return {"unitCount": self.entries, "zeroUnitCount": self.zero_entries, "throughEtpOp": self.through_etp}


def check(context: AnalysisContext) -> Iterator[Hit[ZeroWeightDivisor]]:
    for division in context.weight_divisions:
        if not division.zero_values:
            continue
        violation = ZeroWeightDivisor(display_name(division.weight), division.through_etp, division.zero_values,
                                      division.values)
        yield Hit(violation, weight_path=division.weight, eqn=division.site,
                  related=(("weight created here", division.weight),))


RULE = AnalysisRule(
    id="ETL228",
    name="zero-weight-divisor",
    level=Level.WARNING,
    summary="The step divides by a weight's value while that weight starts at zero in some entry, so the first "
            "training step divides by zero and its values and gradients are not finite, by BPTT as much as online",
    tags=("training", "analysis"),
    violations=(ZeroWeightDivisor,),
    check=check,
)
