from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL015",
    name="scan-weights-not-learning",
    level=Level.WARNING,
    summary="Weights used inside a descended scan through plain ops produce no ETP relation and do not learn online",
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("scan_descent_no_relations",),
)
