from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(g: GradientFacts) -> str:
    return (f"{g.subject} learns against BPTT under {g.algorithm} {g.span}: its online gradient points the "
            f"opposite way, cosine {g.draws or g.cosine} ({g.reason}); a step of online training moves it where "
            f"BPTT would not")


RULE = MeasuredRule(
    id="ETL414",
    name="online-gradient-against-bptt",
    level=Level.WARNING,
    summary=("--verify: a weight's online gradient points against BPTT's (cosine below 0 on every input draw): "
             "it learns in the opposite direction"),
    tags=("verify", "gradient", "learning"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("against-bptt",),
    says=WeightVerdict.AGAINST,
)
