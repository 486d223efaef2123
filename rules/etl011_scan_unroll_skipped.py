from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL011",
    name="scan-unroll-skipped",
    level=Level.WARNING,
    summary="A `scan` touching ETP ops was not unrolled",
    tags=('compiler', 'control-flow'),
    kinds=("scan_unroll_skipped",),
)
