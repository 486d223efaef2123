from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    weights = ", ".join(f.weights) or "some weights"
    one = len(f.weights) == 1
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
