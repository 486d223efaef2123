from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL006",
    name="partial-path",
    level=Level.WARNING,
    summary="A weight reaches a hidden state both directly and through another trainable ETP op; the indirect part of its gradient is missing",
    tags=('compiler', 'learning'),
    kinds=("relation_partial_path",),
)
