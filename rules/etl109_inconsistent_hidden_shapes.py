from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL109",
    name="inconsistent-hidden-shapes",
    level=Level.ERROR,
    summary="Hidden states grouped together have different shapes",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotSupportedError",), pattern=r"shapes of the hidden states are not consistent"),
)
