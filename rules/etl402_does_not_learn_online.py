from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(g: GradientFacts) -> str:
    message = (f"{g.weight} gets no online gradient under {g.algorithm} {g.span} while its BPTT gradient is not "
               f"zero: it will not learn online")
    return f"{message} (see {g.explained_by})" if g.explained_by else message


RULE = MeasuredRule(
    id="ETL402",
    name="does-not-learn-online",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="--verify: a weight's online gradient is identically zero while its BPTT gradient is not",
    tags=("verify", "gradient", "learning"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("not-learning",),
    supersedes=("ETL001", "ETL003", "ETL213"),
)
