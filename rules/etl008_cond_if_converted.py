from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL008",
    name="cond-if-converted",
    level=Level.NOTE,
    summary="A `cond` touching ETP ops was if-converted: both branches now run every step",
    tags=('compiler', 'control-flow'),
    kinds=("cond_if_converted",),
)
