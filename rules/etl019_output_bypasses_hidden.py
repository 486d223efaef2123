from etrace_lint.core.findings import Level
from etrace_lint.core.naming import display_name
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def _sources(f: RecordFacts) -> tuple[str, bool]:
    """What reaches the output, in words, and whether it is one thing: the weights, then the hidden states whose
    previous values do."""
    previous = [display_name(tuple(path)) for path in f.context.get("hidden", ()) or ()]
    said = list(f.weights)
    if previous:
        said.append(f"the previous value{'s' if len(previous) > 1 else ''} of {', '.join(previous)}")
    if not said:
        return "some weights", False
    text = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    return text, len(f.weights) + len(previous) == 1


def explain(f: RecordFacts) -> str:
    weights, one = _sources(f)
    reach = (f"{weights} {'reaches' if one else 'reach'} the step's output without going through a new hidden "
             f"state; ")
    if not f.same_step_gradients:
        return reach + (f"braintrace {f.braintrace_version} adds no same-step gradient for this path under "
                        f"single-step algorithms, so only {'its' if one else 'their'} eligibility trace, if any, "
                        f"trains {'it' if one else 'them'}")
    return reach + f"{'its' if one else 'their'} exact same-step gradient is added to the online one (as for a readout)"


RULE = RecordRule(
    id="ETL019",
    name="output-bypasses-hidden",
    level=Level.NOTE,
    summary=("Parameters reach the step output without passing through a new hidden state; their same-step "
             "gradient is added"),
    tags=('compiler',),
    kinds=("output_bypasses_hidden",),
    explains_weight=False,
    explain=explain,
    # the record exists on the braintrace lines that add the same-step gradient: what such a readout learns from,
    # exactly (a weight that also learns through a trace, or that another rule denies, keeps that verdict)
    says=WeightVerdict.LEARNS,
)
