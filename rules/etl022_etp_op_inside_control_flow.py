from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    return (f"this {f.op} sits inside a loop or branch the compiler could not flatten, so its weight will not "
            f"learn online through it. Move it out of the loop body, or use a fixed-length scan within the "
            f"unroll limit")


RULE = RecordRule(
    id="ETL022",
    name="etp-op-inside-control-flow",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="An ETP op inside a scan/while/cond body that the compiler could not flatten is excluded",
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("primitive_inside_control_flow",),
    record_levels=("info", "warning"),  # an error is the policy refusing it: ETL104
    explain=explain,
)
