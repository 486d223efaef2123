from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL016",
    name="weight-in-while",
    level=Level.ERROR,
    summary="A weight is used inside a `while_loop`: the model cannot be compiled for online learning",
    tags=('compiler', 'control-flow', 'error'),
    kinds=("weight_in_while",),
)
