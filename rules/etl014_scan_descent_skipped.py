from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL014",
    name="scan-descent-skipped",
    level=Level.WARNING,
    summary="Structured descent could not be applied to a long scan; the control-flow restrictions apply",
    tags=('compiler', 'control-flow'),
    kinds=("scan_descent_skipped",),
)
