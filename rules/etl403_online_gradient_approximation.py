from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule


def explain(g: GradientFacts) -> str:
    if g.scale:
        return f"{g.subject} under {g.algorithm} {g.span}: online gradient is {g.scale}, an approximation ({g.reason})"
    return (f"{g.algorithm} online gradient of {g.subject} approximates BPTT {g.span}: relative error {g.rel_error}, "
            f"cosine {g.cosine} ({g.reason})")


RULE = MeasuredRule(
    id="ETL403",
    name="online-gradient-approximation",
    level=Level.NOTE,
    summary="--verify: how far an online gradient that approximates BPTT is from it (cosine, relative error)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("approximation",),
)
