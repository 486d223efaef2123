from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule

if TYPE_CHECKING:  # --advise imports JAX and braintrace: annotations only
    from etrace_lint.verify.advise.findings import AdviceFacts


def explain(facts: AdviceFacts) -> str:
    """AdviceFacts: the configured algorithm's error, and an algorithm that runs."""
    return (f"{facts.algorithm}, the algorithm configured for this model, {facts.stage}: {facts.error}; "
            f"{facts.alternative} runs on it")


RULE = MeasuredRule(
    id="ETL302",
    name="configured-algorithm-does-not-run",
    level=Level.ERROR,
    summary="Advice: the configured online-learning algorithm does not compile or its first step raises, "
            "while another runs",
    tags=("advice", "algorithm"),
    explain=explain,
    explains_weight=False,
    opt_in_flag="--advise",
)
