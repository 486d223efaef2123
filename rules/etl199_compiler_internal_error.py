from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL199",
    name="compiler-error",
    level=Level.ERROR,
    summary="The ETrace compiler raised an error etrace-lint does not recognise",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("Exception",)),
)
