from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"measured over {p.steps} steps under {p.algorithm}, {p.weight}'s online gradient is not zero but "
            f"{p.share}: it learns partly, through another path than this one (its same-step gradient, or another "
            f"use of it)")


RULE = MeasuredRule(
    id="ETL418",
    name="probe-learns-partly",
    level=Level.NOTE,
    summary=("Probe: a weight one use of which gets no online gradient still learns through another path: its "
             "measured online gradient is not zero"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.PARTLY,
    folds_into_static=True,
    learns_partly=True,
)
