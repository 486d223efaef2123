from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL022",
    name="etp-op-inside-control-flow",
    level=Level.WARNING,
    summary="An ETP op inside a scan/while/cond body that the compiler could not flatten is excluded",
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("primitive_inside_control_flow",),
)
