from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL104",
    name="etp-op-in-control-flow",
    level=Level.ERROR,
    summary="An ETP op is left inside a control-flow body and the policy makes that an error",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"ETP primitive .* found inside a", kinds=("primitive_inside_control_flow",)),
)
