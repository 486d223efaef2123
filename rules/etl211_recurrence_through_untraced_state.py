from etrace_lint.findings import Level
from etrace_lint.rule import Hit, Rule


def carried_uses(context):
    """(weight, its ETP op, the untraced state its output is stored in) for each weight without an
    eligibility trace whose op output the step stores in a state it reads back in a later step."""
    from etrace_lint import braintrace_adapter as bt
    from etrace_lint.analysis import TOP

    flow = context.flow
    outputs = {(TOP, v): "output" for v in bt.step_output_vars(context.module_info)}
    carried = {}
    for state in bt.untraced_states(context.module_info):
        if flow.reached(tuple((TOP, v) for v in state.invars), outputs):  # its old value shapes the step
            carried.update({(TOP, v): state for v in state.outvars})
    if not carried:
        return []
    buffered = {use.weight for use in context.buffered_uses}  # ETL206: stored, then read by a hidden state
    learning = context.learning_weights
    found, seen = [], set()
    for site in flow.etp_sites:
        weights = sorted((w for w in flow.weights_read_by(site) if w not in learning and w not in buffered), key=str)
        if not weights:
            continue
        reached = flow.reached(flow.outputs_of(site), {node: state.path for node, state in carried.items()},
                               avoid=flow.hidden)
        if not reached:
            continue
        state = next(s for s in carried.values() if s.path == reached[0])
        for weight in weights:
            if weight not in seen:
                seen.add(weight)
                found.append((weight, site, state))
    return found


def check(context):
    from etrace_lint.braintrace_adapter import adds_same_step_gradients
    from etrace_lint.naming import display_name

    if not adds_same_step_gradients():
        return  # braintrace 0.2.6 gives such a weight nothing at all: ETL209
    for weight, site, state in carried_uses(context):
        name, kept = display_name(weight), display_name(state.path)
        message = (f"{name}'s op output is stored in {kept}, a {state.kind}, which the step reads back in the "
                   f"next step: the compiler carries no eligibility trace through a {state.kind}, so {name} "
                   f"learns from its same-step gradient only, which leaves out its effect through {kept} on "
                   f"every later step and is not BPTT's gradient: keep {kept} in a brainstate.HiddenState")
        yield Hit(message=message, weight_path=weight, eqn=site,
                  related=(("weight created here", weight), (f"{kept} created here", state.path)),
                  properties={"state": kept, "stateKind": state.kind})


RULE = Rule(
    id="ETL211",
    name="recurrence-through-untraced-state",
    level=Level.WARNING,
    summary="A weight's ETP op output is carried to the next step in a state the compiler does not follow, so its "
            "online gradient is its same-step gradient only, not BPTT's",
    tags=("learning", "analysis"),
    check=check,
    supersedes=("ETL003",),
)
