from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL403",
    name="online-gradient-approximation",
    level=Level.NOTE,
    summary="--verify: how far an online gradient that approximates BPTT is from it (cosine, relative error)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    verdicts=("approximation",),
)
