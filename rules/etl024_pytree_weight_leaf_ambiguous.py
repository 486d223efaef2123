from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL024",
    name="ambiguous-pytree-weight-leaf",
    level=Level.WARNING,
    summary="The leaf of a pytree-valued ParamState used by an ETP op could not be resolved; leaf 0 was assumed",
    tags=('compiler', 'learning'),
    kinds=("pytree_weight_leaf_ambiguous",),
)
