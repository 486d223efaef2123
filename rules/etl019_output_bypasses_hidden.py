from etrace_lint.findings import Level
from etrace_lint.rule import Rule


def explain(f):
    weights = ", ".join(f.weights) or "some weights"
    one = len(f.weights) == 1
    return (f"{weights} {'reaches' if one else 'reach'} the step's output without going through a new hidden "
            f"state; {'its' if one else 'their'} exact same-step gradient is added to the online one (as for a "
            f"readout)")


RULE = Rule(
    id="ETL019",
    name="output-bypasses-hidden",
    level=Level.NOTE,
    summary="Parameters reach the step output without passing through a new hidden state; their same-step gradient is added",
    tags=('compiler',),
    kinds=("output_bypasses_hidden",),
    explains_weight=False,
    explain=explain,
)
