from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"{p.weight}'s online gradient under {p.algorithm} is NaN or infinite within {p.steps} steps while its "
            f"BPTT gradient is finite: the first online updates would write NaN into it")


RULE = MeasuredRule(
    id="ETL413",
    name="online-gradient-not-finite",
    level=Level.ERROR,
    summary="Probe: a weight's online gradient is NaN or infinite while its BPTT gradient is finite",
    tags=("probe", "gradient", "error"),
    opt_in_flag="--probe",
    explain=explain,
    supersedes=("ETL001", "ETL003", "ETL213"),
    says=WeightVerdict.NOT_FINITE,
)
