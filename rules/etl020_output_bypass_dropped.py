from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    weights = ", ".join(f.weights) or "some weights"
    return (f"{weights} reach the step's output through a while loop or an op with side effects, bypassing "
            f"every hidden state; that part of their same-step gradient is zero. Compute the output outside the "
            f"loop")


RULE = RecordRule(
    id="ETL020",
    name="output-bypass-dropped",
    level=Level.WARNING,
    summary="Part of a parameter's same-step gradient crosses a `while` loop or an effect and is dropped",
    tags=('compiler', 'learning'),
    kinds=("output_bypass_dropped",),
    explains_weight=False,
    control_flow="while",  # its records name no equation: the nth `while` of the step
    explain=explain,
    flow="weight",
)
