from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    if p.steps == 1:  # at the first step, where braintrace's online gradient must be BPTT's
        return (f"{p.weight} learns against BPTT under {p.algorithm}: at the first step, where it must equal BPTT's, "
                f"its online gradient is {p.deviation} on the first input draw, and points the opposite way to its "
                f"BPTT gradient on each draw that drives it, cosine {p.draws}: braintrace's online rule leaves out "
                f"or turns part of this step's derivative, so each online update moves it where BPTT would not")
    return (f"{p.weight} learns against BPTT under {p.algorithm}: measured over {p.steps} steps, its online "
            f"gradient points the opposite way to its BPTT gradient, cosine {p.draws}; each online update moves "
            f"it where BPTT would not")


RULE = MeasuredRule(
    id="ETL415",
    name="probe-learns-against-bptt",
    level=Level.WARNING,
    summary=("Probe: a weight's measured online gradient points against its BPTT gradient (cosine below 0 on "
             "every input draw, or below -0.1 at the first step, where it must be BPTT's)"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.AGAINST,
    direction=True,
)
