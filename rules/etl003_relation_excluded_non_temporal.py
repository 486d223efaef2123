from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL003",
    name="non-temporal-weight",
    level=Level.WARNING,
    summary="A weight's ETP op reaches no hidden state; it is trained only through same-step gradients",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_non_temporal",),
)
