from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL010",
    name="scan-unrolled",
    level=Level.NOTE,
    summary="A short `scan` touching ETP ops was unrolled by the compiler",
    tags=('compiler', 'control-flow'),
    kinds=("scan_unrolled",),
)
