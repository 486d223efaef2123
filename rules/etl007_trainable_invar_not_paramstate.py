from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL007",
    name="constant-trainable-operand",
    level=Level.NOTE,
    summary="An ETP op's trainable operand (often a bias) is a constant, so it is not trained",
    tags=('compiler', 'learning'),
    kinds=("trainable_invar_not_paramstate",),
)
