from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL019",
    name="output-bypasses-hidden",
    level=Level.NOTE,
    summary="Parameters reach the step output without passing through a new hidden state; their same-step gradient is added",
    tags=('compiler',),
    kinds=("output_bypasses_hidden",),
)
