from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    n, index = f.context.get("num_outvars"), f.context.get("y_outvar_index")
    outputs = f" has {n} outputs;" if n else " has several outputs;"
    taken = index if index is not None else 0
    return f"this {f.op}{outputs} the compiler takes output {taken} as the one that drives hidden states"


RULE = RecordRule(
    id="ETL023",
    name="multi-output-etp-op",
    level=Level.NOTE,
    summary="An ETP primitive has several outputs; the compiler picked one as its output",
    tags=('compiler',),
    kinds=("multi_output_primitive_detected",),
    explain=explain,
)
