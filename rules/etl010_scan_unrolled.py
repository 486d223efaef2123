from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    length = f.context.get("length")
    copies = f" into {length} copies of its body" if length else ""
    return f"this scan was unrolled{copies} so that the weights in it can learn online (same values)"


RULE = RecordRule(
    id="ETL010",
    name="scan-unrolled",
    level=Level.NOTE,
    summary="A short `scan` touching ETP ops was unrolled by the compiler",
    tags=('compiler', 'control-flow'),
    kinds=("scan_unrolled",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    explain=explain,
)
