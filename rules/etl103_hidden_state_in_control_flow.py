from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL103",
    name="hidden-state-in-control-flow",
    level=Level.ERROR,
    summary="A hidden state is computed inside a loop or branch the compiler refuses",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"hidden states are computed within a"),
)
