from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    key = f.context.get("key") or "trainable operand"
    if f.misplaced:
        return (f"the {key} of this {f.op} is not a ParamState ({', '.join(f.misplaced)} is passed as its input "
                f"instead), so it is not trained")
    return (f"the {key} of this {f.op} is a constant, not a ParamState, so it is not trained; make it a "
            f"brainstate.ParamState if it should learn")


RULE = RecordRule(
    id="ETL007",
    name="constant-trainable-operand",
    level=Level.NOTE,
    summary="An ETP op's trainable operand (often a bias) is a constant, so it is not trained",
    tags=('compiler', 'learning'),
    kinds=("trainable_invar_not_paramstate",),
    explain=explain,
)
