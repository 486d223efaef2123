from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    length = f.context.get("length")
    long = f" of length {length}" if length else ""
    verb = "learns" if len(f.weights) == 1 else "learn"
    learning = f": {', '.join(f.weights)} {verb} online through it" if f.weights else ""
    return f"this scan{long} is handled by structured descent{learning}"


RULE = RecordRule(
    id="ETL013",
    name="scan-descent-applied",
    level=Level.NOTE,
    summary="A long scan was compiled with structured descent",
    tags=('compiler', 'control-flow'),
    kinds=("scan_descent_applied",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    explain=explain,
)
