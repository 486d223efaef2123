from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL009",
    name="cond-conversion-skipped",
    level=Level.WARNING,
    summary="A `cond` touching ETP ops could not be if-converted and stays opaque",
    tags=('compiler', 'control-flow'),
    kinds=("cond_conversion_skipped",),
)
