from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    y, hs = f.context.get("y_shape"), f.context.get("hidden_shape")
    hidden = ", ".join(f.hidden) or "the hidden state"
    shapes = f" (shape {tuple(y)} against {tuple(hs)})" if y is not None and hs is not None else ""
    return (f"the output of {f.weight_or_op}'s {f.op} does not broadcast with {hidden}{shapes}, so the compiler "
            f"drops the connection and {f.weight_or_op} does not learn online through it; make the shapes match")


RULE = RecordRule(
    id="ETL004",
    name="hidden-shape-mismatch",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="An ETP op's output does not broadcast with the hidden state it reaches, so the connection is dropped",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_shape_mismatch",),
    explain=explain,
)
