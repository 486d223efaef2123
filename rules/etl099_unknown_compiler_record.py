from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordRule

RULE = RecordRule(
    id="ETL099",
    name="unknown-compiler-record",
    level=Level.WARNING,
    summary="The braintrace compiler made a decision this version of etrace-lint does not know by name",
    tags=("compiler",),
)
