from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL108",
    name="etp-op-misused",
    level=Level.ERROR,
    summary="An ETP op was called with arguments it does not accept",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("Exception",), origin="braintrace._op"),
)
