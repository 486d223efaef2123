from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, RecordErrorRule, RecordFacts


def explain(f: RecordFacts) -> str:
    return (f"this {f.op} sits inside a loop or branch the compiler could not flatten, and the compile options "
            f"make that an error (its weight would not learn online). Move it out of the loop body, use a "
            f"fixed-length scan within the unroll limit, or set ControlFlowPolicy(etp_in_control_flow='exclude') "
            f"to leave it out with a warning")


RULE = RecordErrorRule(
    id="ETL104",
    name="etp-op-in-control-flow",
    level=Level.ERROR,
    summary="An ETP op is left inside a control-flow body and the policy makes that an error",
    tags=("compiler", "error"),
    kinds=("primitive_inside_control_flow",),
    record_levels=("error",),  # the compiler's record of the refusal, then its exception
    explain=explain,
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"ETP primitive .* found inside a",
                     kinds=("primitive_inside_control_flow",)),
)
