from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    return (f"{p.weight}'s online gradient under {p.algorithm} is not measured: over {p.steps} steps it was "
            f"{p.zero} on the probe's first input draw while its BPTT gradient was not (norm {p.bptt_norm}), but "
            f"{p.other_draws}, so the zero belongs to the draws, not to the weight (a spiking layer they do not "
            f"drive, or a norm that removes its input's scale on them); give the target inputs that drive the "
            f"model, @etrace_lint.target(verify={{'inputs': ...}}), and run with --verify")


RULE = MeasuredRule(
    id="ETL417",
    name="online-gradient-not-measured",
    level=Level.NOTE,
    summary=("Probe: a weight's online gradient is zero on one input draw and not on another that drives it, so "
             "the probe claims nothing of it"),
    tags=("probe", "gradient"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.NOT_MEASURED,
    # what the compiler connects is not what the gradient was measured to be: its "learns online" is kept as
    # evidence, not shown beside "not measured"
    supersedes=("ETL001", "ETL003", "ETL213"),
)
