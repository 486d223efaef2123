from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class ConvBiasShape(Violation):
    """A convolution ETP op's bias is not one value per output channel."""

    weight: str
    bias_shape: tuple[int, ...]
    gradient_shape: tuple[int, ...]  # the bias gradient braintrace's conv rule returns: one per channel

    def message(self) -> str:
        shape, channels = self.bias_shape, self.gradient_shape[0]
        return (f"the first online gradient step of D-RTRL, e-prop and braintrace's other per-parameter "
                f"algorithms raises on {self.weight}: its convolution's bias has the shape {shape}, and braintrace's "
                f"conv rule returns that bias's gradient summed over the positions, one value per output "
                f"channel ({channels},), which the learner's custom VJP rejects (the compiler accepts the "
                f"graph, so nothing fails before training starts): give the bias the shape ({channels},) "
                f"(the conv op broadcasts a one-axis bias along the channel axis), e.g. "
                "`layer.weight.value = {**layer.weight.value, "
                "'bias': layer.weight.value['bias'].reshape(-1)}`"
                f" after building the layer")

    def properties(self) -> JsonObject:
        return {"biasShape": list(self.bias_shape), "gradientShape": list(self.gradient_shape)}


def check(context: AnalysisContext) -> Iterator[Hit[ConvBiasShape]]:
    reported = set()
    for site in context.flow.etp_sites:
        shape = context.conv_bias_shape(site)
        if shape is None or len(shape) == 1:
            continue
        for weight in sorted(context.flow.weights_read_by(site), key=str):
            if weight in reported:
                continue
            reported.add(weight)
            channels = shape[-1] if shape else 1
            yield Hit(ConvBiasShape(display_name(weight), tuple(shape), (channels,)), weight_path=weight, eqn=site,
                      related=(("weight created here", weight),))


RULE = AnalysisRule(
    id="ETL210",
    name="conv-bias-shape",
    level=Level.ERROR,
    says=WeightVerdict.STEP_RAISES,
    summary="A convolution ETP op's bias is not one value per channel, so the first online gradient step of "
            "D-RTRL and the other per-parameter algorithms raises",
    tags=("learning", "analysis", "error"),
    violations=(ConvBiasShape,),
    check=check,
    supersedes=("ETL001",),
)
