from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    message = (f"{p.weight} does not learn online under {p.algorithm}: measured over {p.steps} steps, its online "
               f"gradient is {p.zero} while its BPTT gradient is not (norm {p.bptt_norm})")
    return f"{message}, although {p.static}" if p.static else message


RULE = MeasuredRule(
    id="ETL411",
    name="no-online-gradient",
    level=Level.WARNING,
    summary=("Probe: a weight's measured online gradient is zero (up to float32 rounding) while its BPTT "
             "gradient is not"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    supersedes=("ETL001", "ETL003", "ETL213"),
    folds_into_static=True,
    says=WeightVerdict.ZERO,
)
