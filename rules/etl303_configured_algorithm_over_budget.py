from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule

if TYPE_CHECKING:  # --advise imports JAX and braintrace: annotations only
    from etrace_lint.verify.advise.findings import AdviceFacts


def explain(facts: AdviceFacts) -> str:
    """AdviceFacts: the configured algorithm's trace bytes against the budget, and one that fits."""
    return (f"{facts.algorithm}, the algorithm configured for this model, needs {facts.trace} of trace state "
            f"at batch {facts.batch}, over the memory budget of {facts.budget}; {facts.alternative} fits")


RULE = MeasuredRule(
    id="ETL303",
    name="configured-algorithm-over-budget",
    level=Level.WARNING,
    summary="Advice: the configured algorithm's trace at the training batch does not fit the memory budget, "
            "while another's does",
    tags=("advice", "algorithm", "memory"),
    explain=explain,
    explains_weight=False,
    opt_in_flag="--advise",
)
