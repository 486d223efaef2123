from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    key = f.context.get("key") or "weight"
    if f.misplaced:
        states = ", ".join(f.misplaced)
        one = len(f.misplaced) == 1
        # the example names the user's state, not a placeholder that reads as another of their states
        state = f.misplaced[0]
        return (f"{states} {'is a ParamState' if one else 'are ParamStates'}, but this {f.op} reads "
                f"{'it' if one else 'them'} as its input, not as its {key}: the op trains only its {key} argument "
                f"(braintrace.matmul(x, weight): the second), which here is not a ParamState. Pass the state "
                f"there, laid out (in, out): braintrace.matmul(x, {state}) instead of braintrace.matmul({state}, x)")
    return (f"the {key} of this {f.op} is not a ParamState (a constant or a computed value), so nothing is "
            f"trained through it; wrap it in brainstate.ParamState if it should learn")


RULE = RecordRule(
    id="ETL002",
    name="etp-op-without-paramstate",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="An ETP op's trainable input does not come from any ParamState, so nothing is trained through it",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_no_paramstate",),
    explain=explain,
)
