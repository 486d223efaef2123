from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL004",
    name="hidden-shape-mismatch",
    level=Level.WARNING,
    summary="An ETP op's output does not broadcast with the hidden state it reaches, so the connection is dropped",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_shape_mismatch",),
)
