from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL026",
    name="snap-pattern-degenerate",
    level=Level.NOTE,
    summary="A hidden group has no cross-position coupling; SnAp-n coincides with the coupled rule",
    tags=('compiler', 'approximation'),
    kinds=("snap_pattern_degenerate",),
)
