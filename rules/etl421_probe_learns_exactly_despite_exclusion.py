from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"measured over {p.steps} steps under {p.algorithm}, on {p.draws}, {p.weight}'s online gradient is "
            f"BPTT's (relative distance at most {p.share}): what the use left out would carry reaches the loss in "
            f"no later step here, and braintrace adds the weight's exact same-step gradient, so {p.weight} learns "
            f"online as BPTT does and nothing needs to change")


RULE = MeasuredRule(
    id="ETL421",
    name="probe-learns-exactly-despite-exclusion",
    level=Level.NOTE,
    summary=("Probe: a weight one use of which gets no online gradient still gets BPTT's exact gradient: nothing "
             "the use would carry reaches a later step"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.LEARNS,
    folds_into_static=True,
)
