from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    op = f.context.get("op_name") or "loop or branch"
    return (f"{f.weight_or_op} is used inside a {op} the compiler cannot look into, so the model cannot be "
            f"compiled for online learning; apply the weight outside the {op}")


RULE = RecordRule(
    id="ETL030",
    name="weight-in-control-flow",
    level=Level.ERROR,
    says=WeightVerdict.ZERO,
    summary="A weight is used inside a control-flow region the compiler cannot trace through",
    tags=('compiler', 'control-flow', 'error'),
    kinds=("weight_in_control_flow",),
    explain=explain,
)
