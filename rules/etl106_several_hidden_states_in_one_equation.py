from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL106",
    name="several-hidden-states-in-one-equation",
    level=Level.ERROR,
    summary="One equation consumes two hidden states; the compiler supports one",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("ValueError",), pattern=r"only support one hidden state in a single equation"),
)
