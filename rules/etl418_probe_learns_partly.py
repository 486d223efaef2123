from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    if p.same_step:  # nothing over the sequence: the first step's own gradient is all that reaches it
        return (f"measured over {p.steps} steps under {p.algorithm}, {p.weight}'s online gradient is {p.zero} "
                f"beside BPTT's (norm {p.bptt_norm}), but at {p.first_step} it is {p.same_step}: it learns partly, "
                f"through its same-step gradient alone; braintrace's traces carry nothing of what the weight does to "
                f"later steps, so online it learns only what each step's own output asks of it")
    return (f"measured over {p.steps} steps under {p.algorithm}, {p.weight}'s online gradient is not zero but "
            f"{p.share}: it learns partly, through another path than this one (its same-step gradient, or another "
            f"use of it)")


RULE = MeasuredRule(
    id="ETL418",
    name="probe-learns-partly",
    level=Level.NOTE,
    summary=("Probe: a weight one use of which gets no online gradient, or whose online gradient over the sequence "
             "is zero, still learns through another path: its measured online gradient (at the first step, its "
             "same-step gradient) is not zero"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.PARTLY,
    folds_into_static=True,
    learns_partly=True,
)
