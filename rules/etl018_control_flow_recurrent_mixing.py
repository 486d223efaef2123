from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL018",
    name="recurrent-mixing-in-control-flow",
    level=Level.WARNING,
    summary="An opaque loop applies a recurrent weight to the hidden state; its temporal credit falls back to the e-prop approximation",
    tags=('compiler', 'control-flow', 'approximation'),
    kinds=("control_flow_recurrent_mixing",),
)
