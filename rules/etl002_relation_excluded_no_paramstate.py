from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL002",
    name="etp-op-without-paramstate",
    level=Level.WARNING,
    summary="An ETP op's trainable input does not come from any ParamState, so nothing is trained through it",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_no_paramstate",),
)
