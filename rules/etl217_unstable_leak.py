from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class UnstableLeakFactor(NamesHiddenStates):
    """A leak factor, held in a weight, that multiplies a hidden state's previous value and starts at 1 or more
    in magnitude for some unit, so the recurrence does not decay."""

    weight: str
    hidden_states: tuple[str, ...]
    largest: float  # the largest magnitude the factor starts from
    unstable_units: int  # its values that start at 1 or more in magnitude
    units: int  # all its values

    def message(self) -> str:
        weight, hidden, largest = self.weight, self.hidden_states[0], f"{self.largest:.3g}"
        if self.units == 1:
            start = f"it starts at {largest} in magnitude"
        elif self.unstable_units == self.units:
            start = f"all {self.units} of its values start at 1 or more in magnitude (up to {largest})"
        else:
            verb = "starts" if self.unstable_units == 1 else "start"
            start = (f"{self.unstable_units} of its {self.units} values {verb} at 1 or more in magnitude "
                     f"(up to {largest})")
        return (f"{weight} multiplies {hidden}'s previous value in its update and {start}, so {hidden} and the "
                f"eligibility traces braintrace keeps of it do not decay: from the first step of training they grow, "
                f"or at a magnitude of exactly 1 never forget: start {weight} below 1 in magnitude (0.9, say), or "
                f"keep it there with braintrace.element_wise({weight}, weight_fn=jax.nn.sigmoid)")

    def properties(self) -> JsonObject:
        # its weight and hidden state are the finding's subject: the writers print them
        return {"largestMagnitude": self.largest, "unitCount": self.units, "unstableUnitCount": self.unstable_units}


def check(context: AnalysisContext) -> Iterator[Hit[UnstableLeakFactor]]:
    for factor in context.leak_factors:
        unstable = sum(1 for magnitude in factor.initial_magnitudes if magnitude >= 1.0)
        if not unstable:
            continue
        violation = UnstableLeakFactor(display_name(factor.weight), (display_name(factor.hidden),),
                                       max(factor.initial_magnitudes), unstable, len(factor.initial_magnitudes))
        yield Hit(violation, weight_path=factor.weight, eqn=factor.site,
                  related=(("weight created here", factor.weight), ("hidden state created here", factor.hidden)))


RULE = AnalysisRule(
    id="ETL217",
    name="unstable-leak",
    level=Level.WARNING,
    summary="A leak factor held in a weight multiplies a hidden state's previous value and starts at 1 or more in "
            "magnitude, so the hidden state and its eligibility traces grow or never forget from the first step",
    tags=("training", "analysis"),
    violations=(UnstableLeakFactor,),
    check=check,
)
