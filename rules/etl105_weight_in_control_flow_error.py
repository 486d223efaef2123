from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

RULE = ErrorRule(
    id="ETL105",
    name="weight-in-control-flow-error",
    level=Level.ERROR,
    summary="A weight is used inside a loop or branch and compilation fails",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotImplementedError",),
                     pattern=r"weight states are used within a|Weight state used inside a while loop",
                     kinds=("weight_in_while", "weight_in_control_flow")),
)
