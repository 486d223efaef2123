from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL100",
    name="model-does-not-trace",
    level=Level.ERROR,
    summary="The model's step cannot be traced with the target's example inputs",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("Exception",), origin="user"),
)
