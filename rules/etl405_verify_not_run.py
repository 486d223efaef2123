from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule

RULE: MeasuredRule[GradientFacts] = MeasuredRule(
    id="ETL405",
    name="verify-not-run",
    level=Level.WARNING,
    summary="--verify: the gradient check could not run, or could not tell anything, for this model",
    tags=("verify",),
    opt_in_flag="--verify",
)
