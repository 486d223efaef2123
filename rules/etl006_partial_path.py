from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    hidden = ", ".join(f.hidden) or "its hidden state"
    return (f"{f.weight_or_op}{f.where_in_scan()} reaches {hidden} both directly and through another weight's op; "
            f"only the direct path is traced, so its online gradient misses the other part. Learn it by BPTT if "
            f"that part matters, or remove the indirect path")


RULE = RecordRule(
    id="ETL006",
    name="partial-path",
    level=Level.WARNING,
    says=WeightVerdict.PARTLY,
    summary=("A weight reaches a hidden state both directly and through another trainable ETP op; the "
             "indirect part of its gradient is missing"),
    tags=('compiler', 'learning'),
    kinds=("relation_partial_path",),
    explain=explain,
    flow="weight",
)
