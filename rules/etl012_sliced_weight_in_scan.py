from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    return ("this scan iterates over a stacked weight (passed as xs), so each iteration uses a slice of it; the "
            "compiler cannot attribute slices and the weight will not learn online. Give each iteration its own "
            "ParamState, or keep the loop out of the online step")


RULE = RecordRule(
    id="ETL012",
    name="sliced-weight-in-scan",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary=("A scan iterates over a stacked trainable weight; its slices cannot be attributed and the "
             "weight is excluded"),
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("relation_excluded_sliced_weight",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    ordinal_group="scan-skips",  # counted with the other records of the scans the compiler did not unroll
    explain=explain,
)
