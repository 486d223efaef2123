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
class ShiftRemovedBias(Violation):
    """A bias added uniformly along an axis to a value that goes only into a softmax or a mean subtraction over it."""

    weight: str
    bias_shape: tuple[int, ...]  # the shape of the ParamState's value: () for a scalar
    normaliser: str  # 'jax.nn.softmax', 'jax.nn.log_softmax', 'mean subtraction' or 'variance'
    with_variance: bool  # a mean subtraction whose variance is taken too (a layer norm)
    axes: tuple[int, ...]  # the axes along which it removes a shift
    shape: tuple[int, ...]  # the shape of the value the bias is added to
    normaliser_line: int | None  # the normaliser's line, when it is not this one
    sum_count: int  # such sums of the weight: this line's and the others

    def message(self) -> str:
        weight = self.weight
        bias = "a scalar" if not self.bias_shape else f"of shape {_shape(self.bias_shape)}"
        axes = f"axis {self.axes[0]}" if len(self.axes) == 1 else f"axes {self.axes}"
        others = self.sum_count - 1
        where = "on this line" if others == 0 else f"on this line and {others} other{'s' if others > 1 else ''}"
        line = f" on line {self.normaliser_line}" if self.normaliser_line is not None else ""
        if self.normaliser.startswith("jax.nn."):
            into = f"`{self.normaliser}` over {axes}{line}"
            fix = (f"drop {weight}, or give it one value per unit along {axes} if it is meant to shift the "
                   f"probabilities")
        else:
            if self.normaliser == "variance":
                into = f"a variance over {axes}{line}"
            elif self.with_variance:
                into = f"a subtraction of its mean over {axes}{line} and its variance (a layer norm)"
            else:
                into = f"a subtraction of its mean over {axes}{line} (a layer norm's centring)"
            fix = f"drop {weight}, or add it after the normalisation (as a LayerNorm's own bias is, which learns)"
        return (f"{weight} ({bias}) is added uniformly along {axes} of a {_shape(self.shape)} value {where}, and "
                f"the sum goes only into {into}, which removes any constant shift along it: {weight} "
                f"changes nothing the loss sees, so its gradient, by BPTT and online, is zero up to float32 "
                f"rounding and it keeps its initial value: {fix}")

    def properties(self) -> JsonObject:
        # its weight is the finding's subject: the writers print it
        return {"normaliser": self.normaliser, "axes": list(self.axes), "inputShape": list(self.shape),
                "biasShape": list(self.bias_shape), "sumCount": self.sum_count}


def _shape(shape: tuple[int, ...]) -> str:
    return f"({', '.join(str(size) for size in shape)}{',' if len(shape) == 1 else ''})"


def check(context: AnalysisContext) -> Iterator[Hit[ShiftRemovedBias]]:
    for cut in context.shift_removed_bias_cuts:
        if cut.read_through:
            continue  # an ETP op braintrace reads it through still gives it an online gradient: not a zero
        bias = cut.bias
        # name the centring or the softmax, not the variance a layer norm computes first
        remover = next((r for r in bias.removers if r.kind != "variance"), bias.removers[0])
        line = None
        location, added = context.locator.of_site(remover.site), context.locator.of_site(bias.site)
        if location is not None and (added is None or location.line != added.line):
            line = location.line
        with_variance = remover.kind == "mean subtraction" and any(r.kind == "variance" for r in bias.removers)
        violation = ShiftRemovedBias(display_name(cut.weight), bias.bias_shape, remover.kind, with_variance,
                                     remover.axes, remover.shape, line, cut.sum_count)
        yield Hit(violation, weight_path=cut.weight, eqn=bias.site,
                  related=(("weight created here", cut.weight), ("the shift is removed here", remover.site)))


RULE = AnalysisRule(
    id="ETL225",
    name="shift-removed-bias",
    level=Level.WARNING,
    summary="A bias added uniformly along an axis to a value that goes only into a softmax or a mean subtraction "
            "over that axis changes nothing the loss sees, so its gradient is zero, online and by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    # the same-step gradient of a readout and a multi-step VJP's plain path: neither is more than float32 rounding
    supersedes=("ETL001", "ETL003", "ETL213"),
    blocker=Blocker("shift removed", at="the shift is removed here"),
    violations=(ShiftRemovedBias,),
    check=check,
)
