from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL029",
    name="state-mismatch",
    level=Level.WARNING,
    summary="The states seen while tracing differ from the states of the model",
    tags=('compiler', 'state'),
    kinds=("state_mismatch",),
)
