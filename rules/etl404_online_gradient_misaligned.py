from etrace_lint.core.findings import Level
from etrace_lint.core.rule import Rule


def explain(g):
    if g.scale:
        return (f"{g.subject} under {g.algorithm} {g.span}: online gradient is {g.scale}: cosine {g.cosine} is below "
                f"the floor {g.cosine_floor} ({g.reason})")
    return (f"{g.algorithm} online gradient of {g.subject} points away from BPTT {g.span}: cosine {g.cosine} is "
            f"below the floor {g.cosine_floor} ({g.reason})")


RULE = Rule(
    id="ETL404",
    name="online-gradient-misaligned",
    level=Level.WARNING,
    summary="--verify: an approximate online gradient points away from BPTT (cosine below the floor)",
    tags=("verify", "gradient"),
    opt_in_flag="--verify",
    explain=explain,
    verdicts=("misaligned",),
)
