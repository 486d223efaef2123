from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL402",
    name="does-not-learn-online",
    level=Level.WARNING,
    summary="--verify: a weight's online gradient is identically zero while its BPTT gradient is not",
    tags=("verify", "gradient", "learning"),
    opt_in_flag="--verify",
    verdicts=("not-learning",),
)
