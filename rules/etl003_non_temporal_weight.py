from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    if f.blocking:  # the compiler saw it behind other weights that reach no hidden state either
        return (f"{f.weight_or_op} reaches no hidden state (its output feeds only {' and '.join(f.blocking)}, "
                f"which reaches none either): it learns from same-step gradients only, which is exact here; if "
                f"it should drive a state, feed its output into that state's update")
    return (f"{f.weight_or_op} reaches no hidden state: it learns from its same-step gradient only, which is exact "
            f"for a stateless readout but misses any effect carried to later steps through a state that is not a "
            f"brainstate.HiddenState (a ShortTermState); if it should drive a state, feed its output into that "
            f"state's update")


RULE = RecordRule(
    id="ETL003",
    name="non-temporal-weight",
    level=Level.NOTE,
    says=WeightVerdict.LEARNS,
    summary="A weight's ETP op reaches no hidden state; it is trained only through same-step gradients",
    tags=('compiler', 'learning'),
    kinds=("relation_excluded_non_temporal",),
    explain=explain,
)
