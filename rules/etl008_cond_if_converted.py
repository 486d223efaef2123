from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    return ("this cond was flattened so that the weights in it can learn online: both branches now run every "
            "step and a select keeps the right result (same values, more compute)")


RULE = RecordRule(
    id="ETL008",
    name="cond-if-converted",
    level=Level.NOTE,
    summary="A `cond` touching ETP ops was if-converted: both branches now run every step",
    tags=('compiler', 'control-flow'),
    kinds=("cond_if_converted",),
    control_flow="cond",  # its records name no equation: the nth `cond` of the step
    explain=explain,
)
