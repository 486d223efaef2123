from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    hidden = ", ".join(f.hidden) or "a hidden state"
    return f"{f.weight_or_op} learns online: its {f.op} here drives {hidden}"


RULE = RecordRule(
    id="ETL001",
    name="relation-included",
    level=Level.NOTE,
    says=WeightVerdict.LEARNS,
    summary="A weight is connected to the hidden states it drives and will learn online",
    tags=('compiler', 'learning'),
    kinds=("relation_included",),
    explains_weight=False,
    explain=explain,
)
