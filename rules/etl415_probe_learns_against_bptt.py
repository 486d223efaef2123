from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"{p.weight} learns against BPTT under {p.algorithm}: measured over {p.steps} steps, its online "
            f"gradient points the opposite way to its BPTT gradient, cosine {p.draws}; each online update moves "
            f"it where BPTT would not")


RULE = MeasuredRule(
    id="ETL415",
    name="probe-learns-against-bptt",
    level=Level.WARNING,
    summary=("Probe: a weight's measured online gradient points against its BPTT gradient (cosine below 0 on "
             "every input draw)"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.AGAINST,
)
