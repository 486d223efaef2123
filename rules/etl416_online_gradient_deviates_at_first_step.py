from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"at {p.first_step}, where it must equal BPTT's, the online gradient of {p.weight} under {p.algorithm} "
            f"is {p.deviation}: braintrace's online rule leaves out part of this step's derivative, as it does when "
            f"a layer between the weight's op and its hidden state mixes units (a normalization over features, a "
            f"softmax), or when plain code transforms the weight before its op (a ReLU sign constraint, whose slope "
            f"the online rule leaves out), so from its first update on the weight does not follow BPTT's gradient")


RULE = MeasuredRule(
    id="ETL416",
    name="online-gradient-deviates-at-first-step",
    level=Level.WARNING,
    summary=("Probe: at one step, where it must equal BPTT's, a weight's online gradient points another way than "
             "BPTT's"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.APPROXIMATE,
    at_first_step=True,
    # a static finding that says why part of the weight's gradient is missing (ETL201's plain op) keeps its advice
    folds_into_static=True,
)
