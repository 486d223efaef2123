from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    if p.parameter_shape:
        raises = (f"the first online training step under {p.algorithm} raises: {p.weight} has shape "
                  f"{p.parameter_shape}, but the online gradient braintrace computes for it has shape "
                  f"{p.gradient_shape}, and JAX refuses a gradient of another shape than its parameter "
                  f"({p.exception}). The model compiles, so this shows only once training starts; ")
        if p.same_size:
            return f"{raises}give {p.weight} the shape {p.gradient_shape}"
        # no shape of the parameter has the gradient's size: the op's weight is a value computed from it
        return (f"{raises}the ETP op's weight is not {p.weight}'s own value but one computed from it in the step "
                f"(a product with another weight, say), whose whole gradient braintrace gives to {p.weight}: pass "
                f"the op a ParamState's own value, for a factored weight one ETP op per factor "
                f"(braintrace.matmul(braintrace.matmul(x, a), b)) or braintrace.nn.LoRA")
    return f"the model compiles, but its first online training step under {p.algorithm} raises {p.exception}: {p.text}"


RULE = MeasuredRule(
    id="ETL410",
    name="online-step-raises",
    level=Level.ERROR,
    summary="Probe: the model compiles, but its first online gradient step raises",
    tags=("probe", "gradient", "error"),
    opt_in_flag="--probe",
    explain=explain,
    supersedes=("ETL001", "ETL003", "ETL213"),
    folds_into_static=True,  # a raise ETL210 predicted from the graph is its measurement, not a second error
    says=WeightVerdict.STEP_RAISES,
)
