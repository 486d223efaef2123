from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"the model compiles, but braintrace builds no {p.algorithm} learner for it: {p.text.rstrip('.')}. "
            f"Training with {p.algorithm} stops there, before its first step, so no weight learns online; give "
            f"the learner options it accepts (the target's verify={{'algorithm_options': ...}}), or train with "
            f"another algorithm")


RULE = MeasuredRule(
    id="ETL419",
    name="learner-not-built",
    level=Level.ERROR,
    summary="Probe: the model compiles, but braintrace's learner for the target's algorithm cannot be built on it",
    tags=("probe", "algorithm", "error"),
    opt_in_flag="--probe",
    explain=explain,
    explains_weight=False,
    supersedes=("ETL001", "ETL003", "ETL213"),
    says=WeightVerdict.REFUSED,
)
