from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL025",
    name="snap-pattern-conservative",
    level=Level.WARNING,
    summary="The SnAp-n neighbourhood could not be derived and widened to all-to-all",
    tags=('compiler', 'approximation'),
    kinds=("snap_pattern_conservative",),
)
