from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL111",
    name="invalid-compile-options",
    level=Level.ERROR,
    summary="The target's compile options are not valid for the installed braintrace",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("TypeError", "ValueError"), pattern=r"compile_etrace_graph\(\) got an unexpected keyword|ControlFlowPolicy\.|policy\.[a-z_]+ must be|sparse_n"),
)
