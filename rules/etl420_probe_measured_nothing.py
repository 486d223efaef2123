from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts


def explain(p: ProbeFacts) -> str:
    said = (f"the probe measured no online gradient of this model: {p.text.rstrip('.')}. What this run says of "
            f"its weights is the compiled graph's, not a measurement; ")
    if p.exception == "VerifySettingsError":  # the target's own verify options: the probe reads them too
        return said + "correct the target's verify options"
    if p.exception == "DifferentForwards":  # the step is not a pure function of its states and inputs (ETL499)
        return said + ("keep everything the step reads in brainstate states (not Python attributes a trace bakes "
                       "in) and draw randomness from brainstate.random")
    if p.exception == "FloatingPointError":  # BPTT's gradients are NaN or infinite: the model computes one
        return said + "find where the model first computes a NaN or an infinity (run its step with JAX_DEBUG_NANS=1)"
    return said + ("give the target inputs that drive it and a loss on an output that depends on its weights (one "
                   "that does not, a constant such as a softmax over one unit, has no gradient whatever the inputs), "
                   "@etrace_lint.target(verify={'inputs': ..., 'loss': ...}), and run with --verify")


RULE = MeasuredRule(
    id="ETL420",
    name="probe-measured-nothing",
    level=Level.NOTE,
    summary="Probe: nothing of the model could be measured (BPTT's gradient is zero for every weight, or the "
            "probe could not run), so its verdicts are the graph's",
    tags=("probe", "gradient"),
    opt_in_flag="--probe",
    explain=explain,
    explains_weight=False,
)
