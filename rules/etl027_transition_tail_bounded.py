from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    return f"the state-to-state transition was cut at a tail the compiler could not follow: {f.text}"


RULE = RecordRule(
    id="ETL027",
    name="transition-tail-bounded",
    level=Level.NOTE,
    summary="The hidden-to-hidden transition was bounded at a tail",
    tags=('compiler',),
    kinds=("transition_tail_bounded",),
    explain=explain,
)
