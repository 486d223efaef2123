from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, MeasuredRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(g: GradientFacts) -> str:
    if g.online_without_bptt:
        return (f"{g.algorithm} online gradient of {g.subject} is not zero (norm {g.online_without_bptt}) {g.span} "
                f"while its BPTT gradient is exactly zero, although it must equal BPTT here ({g.reason}): the loss "
                f"does not depend on {g.weight}, yet braintrace's online rule moves it (its compiler reads a weight "
                f"through jax.lax.stop_gradient, say)")
    if g.verdict == "nonfinite":
        return (f"{g.algorithm} online gradient of {g.subject} is NaN or infinite {g.span}, although it must equal "
                f"BPTT here ({g.reason}): an ETP rule or the compiler is wrong")
    if g.scale:
        return (f"{g.subject} under {g.algorithm} {g.span}: online gradient is {g.scale}, although it must equal "
                f"BPTT here ({g.reason}): {g.why_scaled}")
    return (f"{g.algorithm} online gradient of {g.subject} differs from BPTT (relative error {g.rel_error}, cosine "
            f"{g.cosine}) {g.span}, although it must equal BPTT here ({g.reason}): an ETP rule or the compiler is "
            f"wrong")


RULE = MeasuredRule(
    id="ETL401",
    name="online-gradient-wrong",
    level=Level.ERROR,
    says=WeightVerdict.APPROXIMATE,
    summary="--verify: an online gradient that must equal BPTT does not (or is NaN/inf)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("nonfinite", "wrong"),
)
