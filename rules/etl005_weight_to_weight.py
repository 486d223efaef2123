from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL005",
    name="weight-to-weight-exclusion",
    level=Level.WARNING,
    summary="A weight reaches its hidden state only through another trainable ETP op, so it is excluded from online learning",
    tags=("compiler", "learning"),
    kinds=("relation_excluded_weight_to_weight",),
)
