from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    weights = ", ".join(f.weights) or "some weights"
    verb = "is" if len(f.weights) == 1 else "are"
    return (f"{weights} {verb} used inside this long scan through plain JAX ops, so "
            f"{'it' if verb == 'is' else 'they'} will not learn online; use braintrace.matmul or "
            f"braintrace.nn.Linear inside the scan body if {'it' if verb == 'is' else 'they'} should")


RULE = RecordRule(
    id="ETL015",
    name="scan-weights-not-learning",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="Weights used inside a descended scan through plain ops produce no ETP relation and do not learn online",
    tags=('compiler', 'control-flow', 'learning'),
    kinds=("scan_descent_no_relations",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    explain=explain,
)
