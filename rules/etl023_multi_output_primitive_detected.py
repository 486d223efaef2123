from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL023",
    name="multi-output-etp-op",
    level=Level.NOTE,
    summary="An ETP primitive has several outputs; the compiler picked one as its output",
    tags=('compiler',),
    kinds=("multi_output_primitive_detected",),
)
