from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL401",
    name="online-gradient-wrong",
    level=Level.ERROR,
    summary="--verify: an online gradient that must equal BPTT does not (or is NaN/inf)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    verdicts=("nonfinite", "wrong"),
)
