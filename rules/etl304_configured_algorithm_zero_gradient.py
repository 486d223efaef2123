from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule

if TYPE_CHECKING:  # --advise imports JAX and braintrace: annotations only
    from etrace_lint.verify.advise.findings import AdviceFacts


def explain(facts: AdviceFacts) -> str:
    """AdviceFacts: a weight without online gradient under the configured algorithm, and one that gives it one."""
    return (f"{facts.weight} gets an exactly zero online gradient under {facts.algorithm}, the algorithm "
            f"configured for this model, while BPTT moves it; under {facts.alternative} it learns")


RULE = MeasuredRule(
    id="ETL304",
    name="configured-algorithm-zero-gradient",
    level=Level.WARNING,
    summary="Advice: the configured algorithm leaves a weight with an exactly zero online gradient that "
            "another algorithm gives it",
    tags=("advice", "algorithm", "gradient", "learning"),
    explain=explain,
    explains_weight=False,
    opt_in_flag="--advise",
)
