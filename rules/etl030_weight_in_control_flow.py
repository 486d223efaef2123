from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL030",
    name="weight-in-control-flow",
    level=Level.ERROR,
    summary="A weight is used inside a control-flow region the compiler cannot trace through",
    tags=('compiler', 'control-flow', 'error'),
    kinds=("weight_in_control_flow",),
)
