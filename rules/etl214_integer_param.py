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
class IntegerParam(Violation):
    """A ParamState the step reads that holds integers or booleans, which JAX does not differentiate."""

    weight: str
    dtype: str

    def message(self) -> str:
        return (f"{self.weight} is a ParamState of {self.dtype}, whose gradient JAX refuses: a training step that "
                f"differentiates the model's ParamStates, as braintrace's online learners and BPTT do "
                f"(brainstate.transform.grad over model.states(brainstate.ParamState)), raises TypeError 'grad "
                f"requires real- or complex-valued inputs' before anything learns: create {self.weight} with a "
                f"floating dtype if it should learn, or keep it in a brainstate.State if it is not a weight")

    def properties(self) -> JsonObject:
        return {"dtype": self.dtype}  # its weight is the finding's subject: the writers print it


def check(context: AnalysisContext) -> Iterator[Hit[IntegerParam]]:
    for weight in context.weight_dtypes:
        if not weight.has_gradient:
            name = display_name(weight.weight)
            yield Hit(IntegerParam(name, ", ".join(weight.dtypes)), weight_path=weight.weight,
                      at_creation=True,  # where it is created with that dtype, not where the step reads it
                      related=(("read by the step here", weight.read_at),) if weight.read_at is not None else ())


RULE = AnalysisRule(
    id="ETL214",
    name="integer-param",
    level=Level.ERROR,
    summary="A ParamState the step reads holds integers or booleans, whose gradient JAX refuses: the training step "
            "raises",
    tags=("learning", "analysis"),
    says=WeightVerdict.STEP_RAISES,
    supersedes=("ETL001",),  # the compiler's "learns online" of a mask it reads as a matmul's weight
    violations=(IntegerParam,),
    check=check,
)
