from etrace_lint.core.findings import Level
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    if "n_detached" in f.context:  # the inputs of a hidden-producing while detached in the perturbed step
        return ("same-step gradients through this while loop's inputs are cut; the loop's own hidden state still "
                "learns exactly, but a weight whose only same-step path to the output crosses the loop gets none "
                "of that gradient")

    path = f.context.get("hidden_path")
    hidden = ", ".join(f.hidden) or (display_name(path) if path else "a hidden state")
    return (f"{hidden} is computed by a weight-free loop or branch; the compiler treats it as one opaque step "
            f"and its gradient stays exact")


RULE = RecordRule(
    id="ETL017",
    name="opaque-forward-control-flow",
    level=Level.NOTE,
    summary="A weight-free loop or branch producing a hidden state is kept as an opaque forward node",
    tags=('compiler', 'control-flow'),
    kinds=("control_flow_opaque_fwd",),
    control_flow="while",  # its records name no equation: the nth `while` of the step
    explain=explain,
)
