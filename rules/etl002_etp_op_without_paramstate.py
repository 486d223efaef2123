from etrace_lint.findings import Level
from etrace_lint.rule import Rule


def explain(f):
    key = f.context.get("key") or "weight"
    return (f"the {key} of this {f.op} is not a ParamState (a constant or a computed value), so nothing is "
            f"trained through it; wrap it in brainstate.ParamState if it should learn")


RULE = Rule(
    id="ETL002",
    name="etp-op-without-paramstate",
    level=Level.WARNING,
    summary="An ETP op's trainable input does not come from any ParamState, so nothing is trained through it",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_no_paramstate",),
    explain=explain,
)
