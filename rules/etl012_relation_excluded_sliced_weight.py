from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL012",
    name="sliced-weight-in-scan",
    level=Level.WARNING,
    summary="A scan iterates over a stacked trainable weight; its slices cannot be attributed and the weight is excluded",
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("relation_excluded_sliced_weight",),
)
