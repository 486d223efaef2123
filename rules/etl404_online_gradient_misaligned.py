from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL404",
    name="online-gradient-misaligned",
    level=Level.WARNING,
    summary="--verify: an approximate online gradient points away from BPTT (cosine below the floor)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    verdicts=("misaligned",),
)
