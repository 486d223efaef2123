from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    hidden = ", ".join(f.hidden) or "a hidden group"
    n = f.context.get("sparse_n")
    snap = f"SnAp-{n}" if n else "SnAp-n"
    return f"the units of {hidden} do not interact, so {snap} computes exactly what the coupled rule computes"


RULE = RecordRule(
    id="ETL026",
    name="snap-pattern-degenerate",
    level=Level.NOTE,
    summary="A hidden group has no cross-position coupling; SnAp-n coincides with the coupled rule",
    tags=('compiler', 'approximation'),
    kinds=("snap_pattern_degenerate",),
    explain=explain,
)
