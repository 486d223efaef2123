from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    reason = f.context.get("reason") or "a branch cannot be flattened"
    return (f"this cond could not be flattened ({reason}), so it stays opaque: weights used inside it cannot "
            f"learn online. Move that part out of the branch")


RULE = RecordRule(
    id="ETL009",
    name="cond-conversion-skipped",
    level=Level.WARNING,
    summary="A `cond` touching ETP ops could not be if-converted and stays opaque",
    tags=('compiler', 'control-flow'),
    kinds=("cond_conversion_skipped",),
    control_flow="cond",  # its records name no equation: the nth `cond` of the step
    explain=explain,
)
