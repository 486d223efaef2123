from etrace_lint.findings import Level
from etrace_lint.rule import Rule


def explain(f):
    if f.context.get("direction") == "retrieved_not_in_compiled":
        name = f.weight or "a state of the model"
        return (f"{name} is a state of the model that the step never reads or writes, so the compiler leaves it "
                f"out and keeps no trace of it; nothing to do unless the step should use it")
    state = f.context.get("state")
    kind = type(state).__name__ if state is not None else "state"
    return (f"a {kind} the step uses is not part of the model (made inside update, or held outside its "
            f"modules); the compiler added it for this trace. Create it in __init__ or init_state")


RULE = Rule(
    id="ETL029",
    name="state-mismatch",
    level=Level.WARNING,
    summary="The states seen while tracing differ from the states of the model",
    tags=('compiler', 'state'),
    kinds=("state_mismatch",),
    explain=explain,
)
