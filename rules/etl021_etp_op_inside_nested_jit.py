from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    return (f"this {f.op} sits inside a nested jit the compiler could not flatten, so "
            f"{f.weight or 'its weight'} will not learn online through it; call it outside the jit")


RULE = RecordRule(
    id="ETL021",
    name="etp-op-inside-nested-jit",
    level=Level.WARNING,
    summary="An ETP op sits inside a nested `jit` the compiler could not flatten",
    tags=('compiler', 'control-flow'),
    kinds=("primitive_inside_nested_jit",),
    explain=explain,
)
