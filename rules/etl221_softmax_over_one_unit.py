from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class SoftmaxOverOneUnit(NamesHiddenStates):
    """A weight whose every path to the step's output crosses a softmax over an axis of one unit, a constant."""

    weight: str
    hidden_states: tuple[str, ...]  # the hidden states it reaches whose values reach the output only through it
    softmax: str  # the function as the user called it: 'jax.nn.softmax', 'jax.nn.log_softmax'
    axes: tuple[int, ...]  # the axes it normalises over
    shape: tuple[int, ...]  # the shape of the array it normalises
    softmax_count: int  # such softmaxes the weight meets first: this line's and the others'

    def message(self) -> str:
        weight, log = self.weight, self.softmax.endswith("log_softmax")
        if self.hidden_states:
            one = len(self.hidden_states) == 1
            route = (f"{weight} reaches the step's output only through {joined(self.hidden_states)}, whose "
                     f"value{'' if one else 's'} reach{'es' if one else ''} it only through")
        else:
            route = f"{weight} reaches the step's output only through"
        axes = f"axis {self.axes[0]}" if len(self.axes) == 1 else f"axes {self.axes}"
        shape = f"({', '.join(str(size) for size in self.shape)}{',' if len(self.shape) == 1 else ''})"
        others = self.softmax_count - 1
        where = "on this line" if others == 0 else f"on this line and {others} other{'s' if others > 1 else ''}"
        several = [axis for axis, size in enumerate(self.shape) if size > 1 and axis not in self.axes]
        if several:
            axis = several[-1]
            fix = f"normalise over an axis of several units (axis={axis}, of size {self.shape[axis]}, say)"
        else:
            sigmoid = "jax.nn.log_sigmoid" if log else "jax.nn.sigmoid"
            fix = f"give the layer before it more than one output unit, or use `{sigmoid}` for the probability of one"
        return (f"{route} `{self.softmax}` over {axes} of a {shape} array ({where}), which normalises a single "
                f"value and is exactly {0 if log else 1} whatever its input: no gradient passes back through it, so "
                f"{weight} gets none, online or by BPTT, and keeps its initial value: {fix}")

    def properties(self) -> JsonObject:
        # its weight and hidden states are the subject: the writers print them
        return {"softmax": self.softmax, "axes": list(self.axes), "inputShape": list(self.shape),
                "softmaxCount": self.softmax_count}


def check(context: AnalysisContext) -> Iterator[Hit[SoftmaxOverOneUnit]]:
    for cut in context.one_unit_softmax_cuts:
        if cut.read_through:
            continue  # an ETP op braintrace reads it through still gives it an online gradient: not a zero
        softmax = cut.softmax
        violation = SoftmaxOverOneUnit(display_name(cut.weight), tuple(display_name(h) for h in cut.hidden),
                                       "jax.nn.log_softmax" if softmax.log else "jax.nn.softmax", softmax.axes,
                                       softmax.shape, cut.softmax_count)
        yield Hit(violation, weight_path=cut.weight, eqn=softmax.site, related=(("weight created here", cut.weight),))


RULE = AnalysisRule(
    id="ETL221",
    name="softmax-over-one-unit",
    level=Level.WARNING,
    summary="A weight reaches the step's output only through a softmax over an axis of one unit, which is exactly 1 "
            "whatever its input, so no gradient reaches the weight, online or by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    # the compiler's "learns online" of the ETP ops before the softmax, the same-step gradient of a readout, and a
    # multi-step VJP's plain path: none of them passes the softmax
    supersedes=("ETL001", "ETL003", "ETL213"),
    blocker=Blocker("softmax over one unit"),
    violations=(SoftmaxOverOneUnit,),
    check=check,
)
