from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(g: GradientFacts) -> str:
    if g.online_without_bptt:
        return (f"{g.algorithm} online gradient of {g.subject} is not zero (norm {g.online_without_bptt}) {g.span} "
                f"while its BPTT gradient is exactly zero: the loss does not depend on {g.weight}, yet braintrace's "
                f"online rule moves it ({g.reason})")
    if g.scale:
        return (f"{g.subject} under {g.algorithm} {g.span}: online gradient is {g.scale}: cosine {g.cosine} is below "
                f"the floor {g.cosine_floor} ({g.reason})")
    return (f"{g.algorithm} online gradient of {g.subject} is poorly aligned with BPTT {g.span}: cosine {g.cosine} "
            f"is below the floor {g.cosine_floor} ({g.reason})")


RULE = MeasuredRule(
    id="ETL404",
    name="online-gradient-misaligned",
    level=Level.WARNING,
    says=WeightVerdict.APPROXIMATE,
    summary=("--verify: an approximate online gradient is poorly aligned with BPTT (cosine below the floor, "
             "not below 0 on every input draw)"),
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("misaligned",),
)
