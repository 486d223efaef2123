from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    return ("this loop mixes the hidden state through a recurrent weight; the compiler leaves it out of the "
            "state-to-state transition, so credit through it uses the e-prop approximation. Pass "
            "include_recurrent_mixing=True in the compile options to trace through it")


RULE = RecordRule(
    id="ETL018",
    name="recurrent-mixing-in-control-flow",
    level=Level.WARNING,
    summary=("An opaque loop applies a recurrent weight to the hidden state; its temporal credit falls back "
             "to the e-prop approximation"),
    tags=('compiler', 'control-flow', 'approximation'),
    kinds=("control_flow_recurrent_mixing",),
    explain=explain,
    flow="weight",
)
