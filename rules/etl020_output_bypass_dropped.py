from etrace_lint.findings import Level
from etrace_lint.rule import Rule

RULE = Rule(
    id="ETL020",
    name="output-bypass-dropped",
    level=Level.WARNING,
    summary="Part of a parameter's same-step gradient crosses a `while` loop or an effect and is dropped",
    tags=('compiler', 'learning'),
    kinds=("output_bypass_dropped",),
)
