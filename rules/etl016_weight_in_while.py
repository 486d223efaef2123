from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    return (f"{f.weight_or_op} is used inside a while loop, which online learning cannot go through (its number "
            f"of iterations depends on the data), so the model cannot be compiled. Apply {f.weight or 'the weight'} "
            f"outside the loop, or use a fixed-length scan/fori_loop that the compiler can unroll")


RULE = RecordRule(
    id="ETL016",
    name="weight-in-while",
    level=Level.ERROR,
    says=WeightVerdict.ZERO,
    summary="A weight is used inside a `while_loop`: the model cannot be compiled for online learning",
    tags=('compiler', 'control-flow', 'error'),
    kinds=("weight_in_while",),
    explain=explain,
)
