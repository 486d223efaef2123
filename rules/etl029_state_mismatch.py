from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    if f.context.get("direction") == "retrieved_not_in_compiled":
        name = f.weight or "a state of the model"
        return (f"{name} is a state of the model that the step never reads or writes, so the compiler leaves it "
                f"out and keeps no trace of it; nothing to do unless the step should use it")
    state = f.context.get("state")
    kind = type(state).__name__ if state is not None else "state"
    if f.global_random_state:
        return ("brainstate's global random state (brainstate.random.DEFAULT), which a layer such as "
                "brainstate.nn.Dropout draws its mask from in the step, is not part of the model, so the compiler "
                "added it for this trace; it carries no gradient and does not change which weights learn online. "
                "The probe and --verify set it to the same key before each online run and each BPTT run, so both "
                "drop the same units; a harness of your own that compares them must reseed it too "
                "(brainstate.random.seed) before each run, or its gradients differ by their masks. Nothing needs "
                "to change (silence it with `# noqa: ETL029`); to keep the masks apart from the global seed, draw "
                "them from a brainstate.random.RandomState the model creates itself")
    return (f"a {kind} the step uses is not part of the model (made inside update, or held outside its "
            f"modules); the compiler added it for this trace. Create it in __init__ or init_state")


RULE = RecordRule(
    id="ETL029",
    name="state-mismatch",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="The states seen while tracing differ from the states of the model",
    tags=('compiler', 'state'),
    kinds=("state_mismatch",),
    explain=explain,
)
