from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"at {p.first_step}, where it must equal BPTT's, the online gradient of {p.weight} under "
            f"{p.algorithm} is {p.scale}: {p.why_scaled}")


RULE = MeasuredRule(
    id="ETL412",
    name="online-gradient-multiple",
    # a braintrace behaviour the user's code cannot change, and the weight learns in BPTT's direction: a note with
    # the figure, not a warning that fails every LSTM's CI
    level=Level.NOTE,
    summary=("Probe: at one step, where it must equal BPTT's, a weight's online gradient is a whole multiple of it "
             "in its direction"),
    tags=("probe", "gradient"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.MULTIPLE,
    at_first_step=True,
)
