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
class ZeroHiddenDivisor(NamesHiddenStates):
    """A division of the step by a hidden state's value at the step's start while that value starts at zero in
    some unit, so the first step divides by zero."""

    hidden_states: tuple[str, ...]
    zero_units: int  # the state's units that start at zero
    units: int  # all its units

    def message(self) -> str:
        hidden = self.hidden_states[0]
        if self.units == 1:
            start = f"{hidden} starts at zero"
        elif self.zero_units == self.units:
            start = f"all {self.units} units of {hidden} start at zero"
        else:
            verb = "starts" if self.zero_units == 1 else "start"
            start = f"{self.zero_units} of the {self.units} units of {hidden} {verb} at zero"
        return (f"this line divides by {hidden}'s value at the step's start, and {start} before the first step: "
                f"the first training step divides by zero there, so its quotient is infinite or NaN and the values "
                f"or gradients computed from it are not finite from the start: start {hidden} away from zero (ones "
                f"in init_state, say), or divide by {hidden} + eps or by a value kept above zero")

    def properties(self) -> JsonObject:
        # its hidden state is the finding's subject: the writers print it
        return {"unitCount": self.units, "zeroUnitCount": self.zero_units}


def check(context: AnalysisContext) -> Iterator[Hit[ZeroHiddenDivisor]]:
    for division in context.hidden_divisions:
        if not division.zero_units:
            continue
        violation = ZeroHiddenDivisor((display_name(division.hidden),), division.zero_units, division.units)
        yield Hit(violation, state_path=division.hidden, eqn=division.site,
                  related=(("hidden state created here", division.hidden),))


RULE = AnalysisRule(
    id="ETL218",
    name="zero-hidden-divisor",
    level=Level.WARNING,
    summary="The step divides by a hidden state's value at its start while that value starts at zero in some "
            "unit, so the first training step divides by zero and its values and gradients are not finite",
    tags=("training", "analysis"),
    violations=(ZeroHiddenDivisor,),
    check=check,
)
