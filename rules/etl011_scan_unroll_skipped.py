from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    reason = f.context.get("reason") or "it cannot be unrolled"
    if f.level == "info":
        return f"this scan was not unrolled ({reason}); the compiler handles it by structured descent instead"
    return (f"this scan was not unrolled ({reason}) and stays opaque: what happens to its weights is reported "
            f"on this line; raise scan_unroll_limit in the compile options or shorten the loop if they should "
            f"learn online")


RULE = RecordRule(
    id="ETL011",
    name="scan-unroll-skipped",
    level=Level.NOTE,
    summary="A `scan` touching ETP ops was not unrolled",
    tags=('compiler', 'control-flow'),
    kinds=("scan_unroll_skipped",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    ordinal_group="scan-skips",  # counted with the other records of the scans the compiler did not unroll
    explain=explain,
)
