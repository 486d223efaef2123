from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL017",
    name="opaque-forward-control-flow",
    level=Level.NOTE,
    summary="A weight-free loop or branch producing a hidden state is kept as an opaque forward node",
    tags=('compiler', 'control-flow'),
    kinds=("control_flow_opaque_fwd",),
)
