from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule

RULE: MeasuredRule[GradientFacts] = MeasuredRule(
    id="ETL499",
    name="verify-harness-mismatch",
    level=Level.ERROR,
    summary="--verify: the online and BPTT runs saw different forward losses, so the check itself is broken",
    tags=("verify", "tool"),
    opt_in_flag="--verify",
)
