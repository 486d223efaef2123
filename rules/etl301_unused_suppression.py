from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL301",
    name="unused-suppression",
    level=Level.WARNING,
    summary="A suppression comment names a rule that reports nothing on its line",
    tags=("housekeeping",),
)
