from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

RULE = ErrorRule(
    id="ETL109",
    name="inconsistent-hidden-shapes",
    level=Level.ERROR,
    summary="Hidden states grouped together have different shapes",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotSupportedError",), pattern=r"shapes of the hidden states are not consistent"),
)
