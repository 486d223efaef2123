from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"{p.weight}'s online gradient under {p.algorithm} is not zero (norm {p.share}) over {p.steps} steps, "
            f"while its BPTT gradient is exactly zero: the loss does not depend on {p.weight}, yet braintrace's "
            f"online rule moves it at every update (its compiler reads a weight through jax.lax.stop_gradient or a "
            f"rounding such as jnp.round, say): if {p.weight} is rounded on purpose and should learn (a quantized "
            f"weight), round it with a straight-through estimator, `x + jax.lax.stop_gradient(f(x) - x)` with f the "
            f"rounding, so that BPTT gives it the same gradient; if it is meant to stay fixed, keep {p.weight} out "
            f"of the parameters the learner trains, or make it a constant")


RULE = MeasuredRule(
    id="ETL422",
    name="probe-online-gradient-without-bptt",
    level=Level.WARNING,
    summary=("Probe: a weight's online gradient is not zero while its BPTT gradient is exactly zero: braintrace "
             "moves a weight the loss does not depend on"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.APPROXIMATE,
    supersedes=("ETL001", "ETL003", "ETL213"),
)
