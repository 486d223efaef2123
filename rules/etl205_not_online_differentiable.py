from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import Violation
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict
from etrace_lint.core.wording import exception_line

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext
    from etrace_lint.analysis.jaxpr_view import EqnSite

# what JAX says when reverse mode meets a primitive it cannot differentiate -> that primitive
_CULPRITS = (
    (re.compile(r"while_loop|fori_loop"), ("while",)),
    (re.compile(r"[Cc]allback"), ("pure_callback", "io_callback", "callback")),
    (re.compile(r"custom_jvp|custom_vjp"), ("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr")),
)


def culprit_site(context: AnalysisContext, message: str) -> EqnSite | None:
    """The first equation of the primitive the error names, if it names one."""
    for pattern, primitives in _CULPRITS:
        if pattern.search(message):
            for site in context.sites:
                if site.primitive in primitives:
                    return site
    return None


@dataclass(frozen=True)
class OnlineStepFails(Violation):
    """One online gradient step of the model cannot be built."""

    algorithm: str
    exception: str  # its class
    text: str  # its text, one line, shortened

    def message(self) -> str:
        return f"the model compiles but one online (D-RTRL) gradient step cannot be built: {self.text}"

    def properties(self) -> JsonObject:
        return {"algorithm": self.algorithm, "exception": self.exception}


def check(context: AnalysisContext) -> Iterator[Hit[OnlineStepFails]]:
    if not context.learning_weights:
        return  # nothing learns online: ETL204's business, and braintrace refuses to build a learner

    error = context.online_gradient_error()
    if error is None:
        return
    text = exception_line(error, limit=300)
    yield Hit(OnlineStepFails("d_rtrl", type(error).__name__, text), eqn=culprit_site(context, str(error)))


RULE = AnalysisRule(
    id="ETL205",
    name="not-online-differentiable",
    level=Level.ERROR,
    says=WeightVerdict.STEP_RAISES,
    summary="The model compiles but one online (D-RTRL) gradient step cannot be built",
    tags=("learning", "analysis", "error"),
    violations=(OnlineStepFails,),
    check=check,
    opt_in_flag="--check-online-grad",
)
