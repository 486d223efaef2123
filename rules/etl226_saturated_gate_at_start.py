from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesWeights
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext

# a slope below this is saturated, as ETL219's weight_fn: 2500 times below a sigmoid's steepest slope (0.25 at 0); a
# sigmoid is that flat from about 9.2 in magnitude, a tanh from about 5.3
SATURATED_SLOPE = 1e-4
THRESHOLD = "1e-4"  # SATURATED_SLOPE as the message writes it


@dataclass(frozen=True)
class SaturatedGateAtStart(NamesWeights):
    """A bias added into a sigmoid's or tanh's input that starts it where it is flat (saturated) for some unit, so the
    gradient of the bias and of every weight reaching the same sum is multiplied by a vanishingly small slope."""

    weight: str  # the bias: the first weight the sum adds as it is
    activation: str  # 'jax.nn.sigmoid', 'jnp.tanh'
    weights: tuple[str, ...]  # the other weights that reach the activation's input: the other biases first
    bias_count: int  # the biases the sum adds: this one and the first bias_count - 1 of `weights`
    largest: float  # the saturated start of the largest magnitude (the biases summed, with the sum's constants)
    smallest: float  # the smallest slope at the starts, computed in float64
    saturated_units: int  # the units where the slope is below SATURATED_SLOPE
    zero_units: int  # those where `dtype` rounds the slope to exactly 0
    units: int  # all the units the biases start
    dtype: str  # the dtype the step computes the activation in

    def message(self) -> str:
        bias, fn, start, slope = self.weight, f"`{self.activation}`", f"{self.largest:.3g}", f"{self.smallest:.2g}"
        biases = " + ".join((bias, *self.weights[:self.bias_count - 1]))
        plural = "s" if self.units > 1 else ""
        values = f"{bias}'s starting value{plural}" if self.bias_count == 1 else f"the starting sum {biases}"
        if self.units == 1:
            where = f"at {values}, {start}, its slope is {slope}"
        elif self.saturated_units == self.units:
            where = f"at {values} its slope is below {THRESHOLD} in all {self.units} units ({slope} at {start})"
        else:
            where = (f"at {values} its slope is below {THRESHOLD} in {self.saturated_units} of its {self.units} "
                     f"units ({slope} at {start})")
        if self.zero_units == self.saturated_units == self.units:
            rounded = f", which {self.dtype} rounds to exactly 0"
        elif self.zero_units:
            rounded = f", and {self.dtype} rounds it to exactly 0 in {self.zero_units} of them"
        else:
            rounded = ""
        names = (bias, *self.weights)
        learners = f"{', '.join(names[:-1])} and {names[-1]}, which feed the same sum," if self.weights else bias
        learn = "they barely learn" if self.weights else "it barely learns"
        if self.zero_units:
            learn += " (not at all where the slope is 0)"
        started = bias if self.bias_count == 1 else f"the sum {biases}"
        if self.activation == "jnp.tanh":
            fix = f"start {started} near 0, where the tanh is steepest"
        else:
            fix = (f"start {started} at a moderate value, where the sigmoid is steep (a forget-gate bias of 1: "
                   f"slope 0.2)")
        return (f"{fn} on this line starts saturated: {where}{rounded}, so the gradient of {learners} is multiplied "
                f"by that slope, online and by BPTT alike: {learn} until the other terms of the sum move it: {fix}")

    def properties(self) -> JsonObject:
        # its bias and the weights it names are the finding's subject: the writers print them
        return {"activation": self.activation, "dtype": self.dtype, "largestMagnitude": abs(self.largest),
                "smallestSlope": self.smallest, "slopeThreshold": SATURATED_SLOPE, "unitCount": self.units,
                "saturatedUnitCount": self.saturated_units, "zeroSlopeUnitCount": self.zero_units}


def check(context: AnalysisContext) -> Iterator[Hit[SaturatedGateAtStart]]:
    for gate in context.gate_slopes:
        saturated = [i for i, slope in enumerate(gate.exact_slopes) if slope < SATURATED_SLOPE]
        if not saturated:
            continue
        largest = max((gate.starts[i] for i in saturated), key=abs)
        zero = sum(1 for i in saturated if gate.slopes[i] == 0.0)
        bias, *others = gate.biases
        named = tuple(display_name(path) for path in (*others, *gate.upstream))
        violation = SaturatedGateAtStart(display_name(bias), gate.activation, named, len(gate.biases), largest,
                                         min(gate.exact_slopes[i] for i in saturated), len(saturated), zero,
                                         len(gate.starts), gate.dtype)
        yield Hit(violation, weight_path=bias, eqn=gate.site, related=(("bias created here", bias),))


RULE = AnalysisRule(
    id="ETL226",
    name="saturated-gate-at-start",
    level=Level.WARNING,
    summary="A bias added into a sigmoid or tanh starts it saturated (its slope below 1e-4 for some unit), so the "
            "gradient of the bias and of the weights feeding the same sum, online and by BPTT, is vanishingly small "
            "and they barely learn",
    tags=("training", "analysis"),
    violations=(SaturatedGateAtStart,),
    check=check,
)
