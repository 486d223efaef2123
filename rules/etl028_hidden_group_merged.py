from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    hidden = ", ".join(f.hidden) or "some hidden states"
    return f"{hidden} feed each other, so the compiler tracks them together as one group"


RULE = RecordRule(
    id="ETL028",
    name="hidden-group-merged",
    level=Level.NOTE,
    summary="Mutually recurrent hidden states were merged into one hidden group",
    tags=('compiler',),
    kinds=("hidden_group_merged",),
    explain=explain,
)
