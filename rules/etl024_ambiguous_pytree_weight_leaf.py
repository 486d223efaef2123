from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    weight = f.weight or "a pytree ParamState"
    return (f"the compiler could not tell which leaf of {weight} this {f.op} uses and assumed the first, so its "
            f"online gradient may go to the wrong leaf; give each array its own ParamState")


RULE = RecordRule(
    id="ETL024",
    name="ambiguous-pytree-weight-leaf",
    level=Level.WARNING,
    summary="The leaf of a pytree-valued ParamState used by an ETP op could not be resolved; leaf 0 was assumed",
    tags=('compiler', 'learning'),
    kinds=("pytree_weight_leaf_ambiguous",),
    explain=explain,
)
