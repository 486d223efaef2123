from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"{p.weight}'s online gradient under {p.algorithm} is not measured: over {p.steps} steps of the probe's "
            f"inputs BPTT's own gradient of it is {p.share}, and so is the online one, so those inputs do not drive "
            f"it (a layer they leave silent, a norm that removes its input's scale, a path the loss barely reads); "
            f"what the compiled graph says of it is not a measurement. Give the target inputs that drive it, "
            f"@etrace_lint.target(verify={{'inputs': ...}}), and run with --verify")


RULE = MeasuredRule(
    id="ETL424",
    name="probe-weight-not-driven",
    level=Level.NOTE,
    summary=("Probe: BPTT's gradient of a weight is round-off beside the model's largest on the probe's inputs, "
             "so nothing is measured of its online gradient"),
    tags=("probe", "gradient"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.NOT_MEASURED,
    # as ETL417: what the compiler connects is not what the gradient was measured to be; its "learns online" is
    # kept as evidence, not shown beside "not measured"
    supersedes=("ETL001", "ETL003", "ETL213"),
)
