from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL013",
    name="scan-descent-applied",
    level=Level.NOTE,
    summary="A long scan was compiled with structured descent",
    tags=('compiler', 'control-flow'),
    kinds=("scan_descent_applied",),
)
